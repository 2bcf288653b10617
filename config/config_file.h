// Operator configuration files for swarmcast and swarmcast-tracker:
// `KEY = VALUE` lines (`#` starts a comment, `[NAME]` starts a section
// whose keys read as `NAME.KEY`), parsed by Boost.Program_options'
// po::parse_config_file into the same options the command line sets, so a
// file can say nothing that a flag cannot.
//
// A config file may carry a token, so it is read only when nobody but its
// owner could have written it (ReadOwnedFile). Values already given by a
// stronger source (the command line, then the environment) are kept:
// store those first, then the file, then call po::notify.
//
// Every error names the file and, where it has one, the line.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <optional>
#include <string>

#include "proto/result.h"

namespace swarmcast::config {

namespace po = boost::program_options;

// Largest config file read; a bigger one is refused.
inline constexpr std::size_t kMaxConfigBytes = 64 << 10;

// The contents of `path`, opened once and checked through that descriptor:
// a regular file (a symbolic link to one is followed), owned by the
// effective user or root, without group or other write permission, at
// most kMaxConfigBytes. The error says which of these failed.
Result<std::string, std::string> ReadOwnedFile(const std::string& path);

// Maps a file's key ("tracker", or "get.output" inside `[get]`) to the
// option of the description to set, or "" to skip the key (it configures
// something else); an error (why the key is refused) when it is unknown.
using KeyResolver = std::function<Result<std::string, std::string>(const std::string& key)>;

// Stores `value` for option `name` of `desc` into `vm` unless `vm` already
// holds a value for it that was not defaulted. nullopt, or the option's
// own complaint about the value (po::error's text).
std::optional<std::string> StoreIfUnset(const po::options_description& desc,
                                        const std::string& name, const std::string& value,
                                        po::variables_map& vm);

// Reads `path` (ReadOwnedFile), parses it with po::parse_config_file and
// stores what `resolve` maps each key to into `vm`, below what is there:
// an option already set (not defaulted) keeps its value, for repeatable
// (composing) options too, so a flag replaces the file's list rather than
// adding to it. A key inside a section is stored before the same option
// at the top level, so the section's value wins. Returns nullopt, or
// "PATH:LINE: why": an unknown key, a line that is not KEY = VALUE, a
// value the option refuses, a single-valued option given twice.
std::optional<std::string> StoreConfigFile(const std::string& path,
                                           const po::options_description& desc,
                                           const KeyResolver& resolve, po::variables_map& vm);

}  // namespace swarmcast::config
