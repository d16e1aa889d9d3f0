// SPDX-License-Identifier: Apache-2.0
// hep::JetCorrectionsProducer: the jet energy corrections of one interval of validity, from the
// conditions source's payload (examples/hep/conditions.json):
//   {"etaEdges": [0, 1.3, ...], "ptEdges": [0, 30, ...], "factors": [... |eta|-major ...]}
#include <stdexcept>

#include <heddle/fw/es_producer.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "../core/jet_corrections.hpp"

namespace hep {

class JetCorrectionsProducer final : public heddle::fw::es_producer {
 public:
  explicit JetCorrectionsProducer(const heddle::fw::parameter_set&)
      : token_(es_produces<jet_corrections, JetCorrectionsRecord>()) {}

  void produce(heddle::fw::es_context& c) const override {
    const heddle::fw::parameter_set& p = c.payload();
    try {
      c.emplace(token_, p.get<std::vector<double>>("etaEdges"), p.get<std::vector<double>>("ptEdges"),
                p.get<std::vector<double>>("factors"));
    } catch (const std::invalid_argument& e) {
      throw heddle::fw::config_error(p.where() + ": " + e.what());
    }
  }

 private:
  heddle::fw::es_put_token<jet_corrections, JetCorrectionsRecord> token_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::JetCorrectionsProducer);
