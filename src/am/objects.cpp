// SPDX-License-Identifier: Apache-2.0
// Remote objects (heddle/am/remote.hpp): the owner's table of objects and their serial queues
// (object_table, objects.hpp), and the engine's side of them.
//
// The polling thread appends each object_call and object_release frame to its object's queue in the
// order frames arrive; one task at a time drains a queue (started when the queue was idle), running
// the calls through run_call with the object set as the current one, so a method runs on a worker
// and never holds the receiving thread, and the calls on one object never overlap or reorder. A
// release is queued too: the object is destroyed after the calls that came before it.
#include "objects.hpp"

#include <cstring>

#include "engine.hpp"
#include "heddle/am/remote.hpp"

namespace heddle::am_detail {

namespace {
thread_local void* running_object = nullptr;
}

void* current_object() noexcept { return running_object; }

// ---- the table ----------------------------------------------------------------------------------

std::uint64_t object_table::adopt(node_id here, void* object, void (*destroy)(void*)) {
  auto o = std::make_shared<entry>();
  const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  o->id = id;
  o->object = object;
  o->destroy = destroy;
  std::lock_guard lock(m_);
  objects_.emplace(std::pair{here, id}, std::move(o));
  return id;
}

object_table::queued object_table::enqueue(node_id here, std::uint64_t id, node_id from, const message_header& h,
                                           std::span<const std::byte> args, std::shared_ptr<entry>& o) {
  {
    std::lock_guard lock(m_);
    if (auto it = objects_.find({here, id}); it != objects_.end()) o = it->second;
  }
  if (!o) return queued::no_object;
  std::lock_guard lock(o->m);
  o->items.push_back({from, h, std::vector<std::byte>(args.begin(), args.end())});
  return std::exchange(o->draining, true) ? queued::behind : queued::start_drain;
}

bool object_table::next(node_id here, const std::shared_ptr<entry>& o, item& it, void*& object) {
  for (;;) {
    {
      std::lock_guard lock(o->m);
      if (o->items.empty()) {
        o->draining = false;
        return false;
      }
      it = std::move(o->items.front());
      o->items.pop_front();
      object = o->object;
      if (it.h.kind != message_kind::object_release) return true;
      o->object = nullptr;
    }
    {
      std::lock_guard lock(m_);
      objects_.erase({here, o->id});
    }
    if (object) o->destroy(object);
  }
}

void object_table::destroy_all() {
  std::map<std::pair<node_id, std::uint64_t>, std::shared_ptr<entry>> left;
  {
    std::lock_guard lock(m_);
    left.swap(objects_);
  }
  for (auto& [key, o] : left) {
    std::lock_guard lock(o->m);
    if (o->object) o->destroy(std::exchange(o->object, nullptr));
  }
}

// ---- the engine's side: calls out, frames in ----------------------------------------------------

void engine::object_call(node_id from, node_id to, std::uint64_t id, std::uint32_t handler,
                         std::span<const std::byte> args, pending_call* p) {
  const message_header h{.kind = message_kind::object_call,
                         .handler = handler,
                         .call_id = new_call_id(),
                         .payload_bytes = sizeof id + args.size()};
  request_frame(from, to, h.pack(), std::as_bytes(std::span(&id, 1)), args, p);
}

void engine::release_object(node_id from, node_id to, std::uint64_t id) {
  const message_header h{.kind = message_kind::object_release, .payload_bytes = sizeof id};
  send_general(from, to, h, std::as_bytes(std::span(&id, 1)), {}, {});  // send_frame is engine.cpp's own (inline)
}

void engine::object_frame(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  const std::uint64_t id = offload::object_id_of(payload);  // decode_error: a corrupt frame
  std::shared_ptr<object_table::entry> o;
  switch (objects_.enqueue(to, id, from, h, payload.subspan(sizeof id), o)) {
    case object_table::queued::no_object:
      if (h.kind == message_kind::object_call)
        reply_failure(to, from, h.call_id,
                      "heddle::offload: node " + std::to_string(to) + " has no object " + std::to_string(id) +
                          " (destroyed when its last remote_ptr was dropped, or never made there)");
      return;                                   // a release of an object that is gone already: nothing to do
    case object_table::queued::behind: return;  // the queue's task takes it
    case object_table::queued::start_drain: break;
  }
  task_begun();
  (void)rt_->task([this, to, o] {  // nobody waits for the task: the calls reply
    drain_object(to, o);
    task_ended();
  });
}

void engine::drain_object(node_id here, const std::shared_ptr<object_table::entry>& o) {
  object_table::item it;
  void* object;
  while (objects_.next(here, o, it, object)) {
    if (!object) {  // a call that came after the release
      reply_failure(here, it.from, it.h.call_id,
                    "heddle::offload: node " + std::to_string(here) + " has no object " + std::to_string(o->id) +
                        " (destroyed)");
      continue;
    }
    void* saved = std::exchange(running_object, object);
    run_call(it.from, here, it.h, it.args);
    running_object = saved;
  }
}

}  // namespace heddle::am_detail
