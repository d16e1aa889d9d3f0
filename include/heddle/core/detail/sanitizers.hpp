// SPDX-License-Identifier: Apache-2.0
// Which sanitizer instruments this translation unit, spelled the same for both compilers: g++
// defines __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__, clang (14) answers __has_feature instead.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define HEDDLE_DETAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEDDLE_DETAIL_ASAN 1
#endif
#endif
#ifndef HEDDLE_DETAIL_ASAN
#define HEDDLE_DETAIL_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define HEDDLE_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HEDDLE_DETAIL_TSAN 1
#endif
#endif
#ifndef HEDDLE_DETAIL_TSAN
#define HEDDLE_DETAIL_TSAN 0
#endif
