// The push channel's flags of `seed` and `get`; what they mean is the
// policy in node/push_wiring.h, which they fill.
#pragma once

#include "node/cli/common.h"
#include "node/push_wiring.h"

namespace swarmcast::node::cli {

using PushSeedFlags = SeedPushSettings;
void AddPushSeedOptions(po::options_description& d, PushSeedFlags& f);

using PushGetFlags = GetPushSettings;
void AddPushGetOptions(po::options_description& d, PushGetFlags& f);

}  // namespace swarmcast::node::cli
