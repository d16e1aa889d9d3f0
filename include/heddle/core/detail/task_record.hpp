// SPDX-License-Identifier: Apache-2.0
// The unit the scheduler moves around: a task record. Everything that runs on a worker (a spawned
// future's body, a task_group member, a continuation, later an async successor) starts with this header.
#pragma once

#include <atomic>
#include <cstdint>

namespace heddle::core_detail {

struct worker;
struct task_base;

// Per-type operations. One static table per record type keeps the header at four words.
struct task_vtable {
  // Runs the task and publishes its completion. The record may be freed before it returns,
  // so the caller must not touch it afterwards.
  void (*execute)(task_base*) noexcept;
  // The runtime is stopping and will never run it: complete it as cancelled (or free it).
  void (*discard)(task_base*) noexcept;
};

struct task_base {
  const task_vtable* vt;
  task_base* next = nullptr;  // intrusive link for the injection and express queues
  // Written by a worker that steals the record. A waiter on this task then steals only from that
  // worker (leapfrogging), which bounds how deep helping can nest the stack.
  std::atomic<worker*> thief{nullptr};
  // The isolation region (heddle::isolate) the record was spawned in, 0 for none: written when it
  // is handed to a runtime (spawn_local, inject, submit_express, an inline short_task start) from
  // the spawning thread's current isolation, and read only after that. A worker runs it with that
  // isolation as its own, so waits inside it are isolated too. Not initialised here: the spawn's
  // store then replaces the constructor's (one load more per spawn, not a load and a store).
  std::uint32_t isolation;
  // Reserved for per-task tracing (a label id); the header stays 32 bytes. Left uninitialised and
  // read by nothing until tracing writes it: initialising it made GCC stop inlining the record's
  // construction into spawning code (measured: +7% instructions on fib(25)).
  std::uint32_t trace_tag;

  explicit task_base(const task_vtable* v) noexcept : vt(v) {}
};
static_assert(sizeof(task_base) == 32, "a task record's header is 32 bytes (docs/core.md, docs/architecture.md)");

// Something to run when a future becomes ready: a `then` successor, a when_all slot, or a waiter
// asleep on it. Stored as a tagged pointer in the future's state word, hence the alignment.
struct alignas(16) continuation {
  void (*ready)(continuation*) noexcept;
};

}  // namespace heddle::core_detail
