// Where a `swarmcast` command's options come from besides its command
// line, strongest first: the command line, the environment
// (SWARMCAST_TRACKER for --tracker, SWARMCAST_TOKEN for --token), the
// config file ($SWARMCAST_CONFIG, else /etc/swarmcast/swarmcast.conf when
// it exists; SWARMCAST_CONFIG set but empty reads none). A configured node
// then needs no flags:
//
//   tracker = http://10.0.0.1:6969     # the options every command shares
//   [get]                              # one command's own options
//   output = /srv/images
//
// Top-level keys are the shared options (AddTrackerOptions,
// AddNetworkOptions, progress-interval, quiet, verbose), used by each
// command that has them; a section per command (kCommands: `[get]`,
// `[seed]`, ...) takes any option of that command but help and json
// (--json is the caller's choice of output, not the node's setting).
// Another command's section is checked when that command runs. --token
// and --token-file count as one setting: whichever a stronger source gave,
// a weaker one's token and token file are both ignored. ParseArgs
// (common.h) applies all of this for every command.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>

namespace swarmcast::node::cli {

inline constexpr char kDefaultConfigPath[] = "/etc/swarmcast/swarmcast.conf";

// The paragraph --help prints about the above.
extern const char kConfigHelp[];

// Stores the environment's and then the config file's values for
// `command`, whose options are `d`, into `vm` below what it holds (the
// command line). nullopt, or the error to print (naming file and line).
std::optional<std::string> StoreEnvironmentAndConfig(
    const std::string& command, const boost::program_options::options_description& d,
    boost::program_options::variables_map& vm);

}  // namespace swarmcast::node::cli
