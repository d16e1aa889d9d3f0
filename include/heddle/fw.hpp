// SPDX-License-Identifier: Apache-2.0
// The event-processing framework: modules of three kinds (global, stream, one) that read and write
// typed products, run once per event on demand, on paths of filters; abilities (ExternalWork); runs and
// luminosity blocks with their products; conditions; parameters; plugins; many events in flight;
// and the single-threaded reference processor that gives the same answers.
#pragma once

#include "heddle/fw/abilities.hpp"
#include "heddle/fw/analysis.hpp"
#include "heddle/fw/conditions.hpp"
#include "heddle/fw/config.hpp"
#include "heddle/fw/errors.hpp"
#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/global.hpp"
#include "heddle/fw/one.hpp"
#include "heddle/fw/parameter_set.hpp"
#include "heddle/fw/plugins.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/processor.hpp"
#include "heddle/fw/registry.hpp"
#include "heddle/fw/stream.hpp"
#include "heddle/fw/timeline.hpp"
#include "heddle/fw/waiting.hpp"
