#include "node/cli/node_config.h"

#include <cstdlib>
#include <set>

#include "config/config_file.h"
#include "node/cli/commands.h"
#include "node/cli/common.h"

namespace swarmcast::node::cli {
namespace {

// The keys a file may hold at the top: the option groups every command
// draws from, named by the functions that define them, so that an option
// added there is accepted here too.
const std::set<std::string>& TopLevelKeys() {
  static const std::set<std::string> keys = [] {
    po::options_description shared;
    TrackerFlags trk;
    NetworkFlags net;
    CommonFlags common;
    AddTrackerOptions(shared, trk);
    AddNetworkOptions(shared, net);
    AddCommonOptions(shared, common);
    std::set<std::string> names;
    for (const auto& o : shared.options()) names.insert(o->long_name());
    names.erase("help");
    names.erase("json");
    return names;
  }();
  return keys;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// --token and --token-file are one setting spelt two ways: the one a
// stronger source gave hides both in a weaker one.
bool IsTokenOption(const std::string& name) { return name == "token" || name == "token-file"; }
bool TokenAlreadySet(const po::variables_map& vm) {
  for (const char* o : {"token", "token-file"}) {
    if (vm.count(o) && !vm[o].defaulted()) return true;
  }
  return false;
}

Result<std::string, std::string> Resolve(const std::string& command,
                                         const po::options_description& d,
                                         const po::variables_map& vm, const std::string& key) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) {
    if (!TopLevelKeys().count(key)) {
      return Unexpected("unknown option '" + key + "' (at the top: " + Join(TopLevelKeys()) +
                        "; a command's own options go under [COMMAND])");
    }
    if (IsTokenOption(key) && TokenAlreadySet(vm)) return std::string();
    return d.find_nothrow(key, false) != nullptr ? key : std::string();
  }
  const std::string section = key.substr(0, dot), name = key.substr(dot + 1);
  bool known = false;
  for (const Command& c : kCommands) known = known || c.name == section;
  if (!known) {
    std::set<std::string> names;
    for (const Command& c : kCommands) names.insert(std::string(c.name));
    return Unexpected("unknown section [" + section + "] (commands: " + Join(names) + ")");
  }
  if (section != command) return std::string();
  if (name == "help" || name == "json" || d.find_nothrow(name, false) == nullptr) {
    return Unexpected("unknown option '" + name + "' in [" + section + "] (see swarmcast " +
                      section + " --help)");
  }
  if (IsTokenOption(name) && TokenAlreadySet(vm)) return std::string();
  return name;
}

}  // namespace

const char kConfigHelp[] =
    // No line may start with '-': bash completion (_parse_help) would take
    // it for an option.
    "Configuration: options also come from the environment (SWARMCAST_TRACKER\n"
    "for --tracker, SWARMCAST_TOKEN for --token) and from a config file,\n"
    "$SWARMCAST_CONFIG or else /etc/swarmcast/swarmcast.conf (an empty\n"
    "SWARMCAST_CONFIG reads none): KEY = VALUE lines, a key being a long option\n"
    "without its dashes. At the top go the options the commands share (tracker,\n"
    "token, token-file, ca-file, timeout, tracker-retry, listen, connect,\n"
    "disk-io, max-download-rate, max-upload-rate, progress-interval, quiet,\n"
    "verbose);\n"
    "under [COMMAND] (create, seed, get, ...) any option of that command. The\n"
    "command line wins over the environment, which wins over the file (a token\n"
    "or token file given higher up hides both lower down). The file must be\n"
    "owned by you or root and writable by nobody else; an unknown key is an\n"
    "error.\n";

std::optional<std::string> StoreEnvironmentAndConfig(const std::string& command,
                                                     const po::options_description& d,
                                                     po::variables_map& vm) {
  for (const auto& [var, option] :
       {std::pair{"SWARMCAST_TRACKER", "tracker"}, std::pair{"SWARMCAST_TOKEN", "token"}}) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == '\0' || d.find_nothrow(option, false) == nullptr) continue;
    if (IsTokenOption(option) && TokenAlreadySet(vm)) continue;
    if (auto why = config::StoreIfUnset(d, option, value, vm))
      return std::string(var) + ": " + *why;
  }

  std::string path = kDefaultConfigPath;
  if (const char* env = std::getenv("SWARMCAST_CONFIG")) {
    if (*env == '\0') return std::nullopt;
    path = env;
  } else {
    std::error_code ec;
    // Only the default may be missing; a file named on purpose must be there.
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
  }
  return config::StoreConfigFile(
      path, d, [&](const std::string& key) { return Resolve(command, d, vm, key); }, vm);
}

}  // namespace swarmcast::node::cli
