// The event-processing framework: modules that run once per event on demand, paths of filters,
// thread-safety levels, ExternalWork, runs, many events in flight; and the single-threaded
// reference processor that gives the same answers.
#pragma once

#include "heddle/fw/analysis.hpp"
#include "heddle/fw/config.hpp"
#include "heddle/fw/errors.hpp"
#include "heddle/fw/module.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/processor.hpp"
#include "heddle/fw/timeline.hpp"
#include "heddle/fw/waiting.hpp"
