// SPDX-License-Identifier: Apache-2.0
// The echo server of examples/echo_server.cpp over `connections` AF_UNIX socket pairs, its server
// side written as coroutines or as chains of `then` callbacks, driven by the same client (the
// calling thread: a round writes one message to every connection, then reads every echo back).
#pragma once

#include <heddle/heddle.hpp>

namespace heddle::bench::spawn {

enum class echo_style { coroutines, callbacks };

// Seconds for `rounds` rounds over `connections` connections served on `rt`; throws
// std::runtime_error when an echo differs from what was sent. The pairs are made, and the server
// ends after the clients close, outside the timed region.
double time_echo(heddle::runtime& rt, echo_style style, int connections, int rounds);

}  // namespace heddle::bench::spawn
