// SPDX-License-Identifier: Apache-2.0
// The active-message layer: calls and data transfers between processes and nodes.
#pragma once

#include "heddle/am/buffer.hpp"
#include "heddle/am/errors.hpp"
#include "heddle/am/functor.hpp"
#include "heddle/am/message.hpp"
#include "heddle/am/offload.hpp"
#include "heddle/am/remote.hpp"
#include "heddle/am/serialize.hpp"
#include "heddle/am/session.hpp"
