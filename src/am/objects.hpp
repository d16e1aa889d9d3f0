// SPDX-License-Identifier: Apache-2.0
// This node's remote objects (heddle/am/remote.hpp): each object adopted here, by (node, id), and
// its serial queue, the frames for it (object_call, object_release) in arrival order.
//
// Why a class of its own: the table and its queues are bookkeeping that no call but an object's
// touches, under locks of their own; what runs a queued call (the handler, its reply, the task that
// drains a queue) is the engine's, which drains a queue through next() (objects.cpp).
//
// Thread safety: every call may be made from any thread. The table has a mutex, each object one
// more (its queue, its pointer and whether a task drains it); neither is held while a call runs.
// One task at a time drains an object's queue: enqueue() says when to start one, and next() hands
// it the calls until the queue is empty.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "heddle/am/errors.hpp"
#include "heddle/am/message.hpp"

namespace heddle::am_detail {

class object_table {
 public:
  // One frame for an object, as it arrived.
  struct item {
    node_id from;
    message_header h;
    std::vector<std::byte> args;  // an object_call's arguments (after the object's id)
  };
  // An object and its serial queue.
  struct entry {
    std::uint64_t id;
    void* object;  // nullptr once released
    void (*destroy)(void*);
    std::mutex m;  // items, object and draining
    std::deque<item> items;
    bool draining = false;
  };
  enum class queued {
    no_object,    // node `here` has no object `id` (gone, or never made): nothing queued
    behind,       // a task drains the queue already and will take the frame
    start_drain,  // the queue was idle: the caller starts the task that drains it
  };

  // Adopts `object` (destroyed by `destroy`) as an object of node `here`; its id. Any thread.
  std::uint64_t adopt(node_id here, void* object, void (*destroy)(void*));
  // Appends the frame `h` from `from` (its payload after the object's id: `args`) to the queue of
  // object `id` of node `here`; `o` receives the object's entry (for a drain). The polling thread:
  // frames are queued in the order they arrive.
  queued enqueue(node_id here, std::uint64_t id, node_id from, const message_header& h, std::span<const std::byte> args,
                 std::shared_ptr<entry>& o);
  // The drain of `o`'s queue: the next call into `it`, with the object to run it on (nullptr for a
  // call that came after the object's release); false when the queue is empty, the drain over. A
  // release met on the way ends the object (its entry out of the table, the object destroyed) and
  // the look goes on. The one task that drains `o` (enqueue said start_drain), until it returns false.
  bool next(node_id here, const std::shared_ptr<entry>& o, item& it, void*& object);
  // Destroys every object still here (the session's end, when no thread polls), without running
  // what their queues hold.
  void destroy_all();

 private:
  std::mutex m_;  // objects_
  std::map<std::pair<node_id, std::uint64_t>, std::shared_ptr<entry>> objects_;
  std::atomic<std::uint64_t> next_id_{1};
};

}  // namespace heddle::am_detail
