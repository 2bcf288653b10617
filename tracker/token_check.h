// The tracker's private-mode tokens: proto::TokenSet (shared with the push
// channel, which checks a subscriber's HELLO token the same way).
#pragma once

#include "proto/token_set.h"

namespace swarmcast::tracker {

using proto::TokenSet;

}  // namespace swarmcast::tracker
