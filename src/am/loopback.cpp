// SPDX-License-Identifier: Apache-2.0
// The loopback backend: every node lives in this process. A frame is delivered on the sending
// thread, with nothing between the engine and itself: calls still go through the registry, the
// serialisation and the runtime, so the loopback tests all of the engine but the wire.
#include "transports.hpp"

namespace heddle::am_detail {

namespace {

class loopback_transport final : public transport {
 public:
  void start(frame_sink& sink) override { sink_ = &sink; }
  bool send(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
            std::span<const std::byte> tail, bool, const std::shared_ptr<void>&) override {
    if (tail.empty()) {
      sink_->deliver(from, to, h, head);
    } else {
      std::vector<std::byte> all(head.begin(), head.end());
      all.insert(all.end(), tail.begin(), tail.end());
      sink_->deliver(from, to, h, all);
    }
    return true;
  }
  bool send_packed(node_id from, node_id to, const message_header::words& header, std::span<const std::byte> payload,
                   bool wait) override {
    return send(from, to, message_header::unpack(header), payload, {}, wait, {});
  }
  bool poll() override { return false; }
  bool pending() const override { return false; }
  void sleep(std::chrono::nanoseconds) override {}
  void interrupt() override {}

 private:
  frame_sink* sink_ = nullptr;
};

}  // namespace

std::unique_ptr<transport> make_loopback_transport(const session_options&) {
  return std::make_unique<loopback_transport>();
}

}  // namespace heddle::am_detail
