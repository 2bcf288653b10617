#include "config/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

namespace swarmcast::config {
namespace {

std::string Errno(const std::string& path, const std::string& what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// A KEY = VALUE line as po::parse_config_file reports it, with what the
// parser does not report: its line number and whether a section holds it.
struct KeyLine {
  int line = 0;
  bool in_section = false;
};

// The KEY = VALUE lines of `text` in order, by the rules of Boost's
// common_config_file_iterator (a comment runs from '#' to the end of the
// line; blanks around are trimmed; `[NAME]` opens a section), so the k-th
// option parse_config_file returns came from the k-th entry here.
// `bad_line` is the first line that is none of those, or 0.
std::vector<KeyLine> ScanKeyLines(const std::string& text, int& bad_line) {
  std::vector<KeyLine> keys;
  bool in_section = false;
  bad_line = 0;
  std::istringstream in(text);
  int n = 0;
  for (std::string s; std::getline(in, s);) {
    ++n;
    s = s.substr(0, s.find('#'));
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) continue;
    s = s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
    if (s.front() == '[' && s.back() == ']') {
      in_section = true;
    } else if (s.find('=') != std::string::npos) {
      keys.push_back({n, in_section});
    } else if (bad_line == 0) {
      bad_line = n;
    }
  }
  return keys;
}

std::optional<std::string> Store(const po::options_description& desc, const std::string& name,
                                 const std::string& value, po::variables_map& vm) {
  po::parsed_options one(&desc);
  one.options.emplace_back(name, std::vector<std::string>{value});
  one.options.back().original_tokens = {name, value};
  try {
    po::store(one, vm);
  } catch (const po::error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace

Result<std::string, std::string> ReadOwnedFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
  // below as not a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return Unexpected(Errno(path, "cannot open"));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Unexpected(Errno(path, "cannot stat"));
  if (!S_ISREG(st.st_mode)) return Unexpected(path + ": not a regular file");
  // It can hold a token: another user who could write it could point the
  // node at their own tracker, or read what it sends.
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return Unexpected(path + ": refused: owned by uid " + std::to_string(st.st_uid) +
                      ", not by this user (uid " + std::to_string(::geteuid()) + ") or root");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Unexpected(path + ": refused: writable by group or others (chmod go-w)");
  }
  std::string text(kMaxConfigBytes + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected(Errno(path, "read failed"));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > kMaxConfigBytes) {
    return Unexpected(path + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes");
  }
  text.resize(got);
  return text;
}

std::optional<std::string> StoreIfUnset(const po::options_description& desc,
                                        const std::string& name, const std::string& value,
                                        po::variables_map& vm) {
  if (vm.count(name) && !vm[name].defaulted()) return std::nullopt;
  return Store(desc, name, value, vm);
}

std::optional<std::string> StoreConfigFile(const std::string& path,
                                           const po::options_description& desc,
                                           const KeyResolver& resolve, po::variables_map& vm) {
  auto text = ReadOwnedFile(path);
  if (!text) return text.error();
  int bad_line = 0;
  const std::vector<KeyLine> lines = ScanKeyLines(*text, bad_line);
  std::istringstream in(*text);
  po::parsed_options parsed(nullptr);
  try {
    // Nothing registered: every key comes back, and `resolve` decides.
    parsed = po::parse_config_file(in, po::options_description(), /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    return path + ":" + std::to_string(bad_line) + ": " + e.what();
  }
  if (parsed.options.size() != lines.size()) {
    return path + ": cannot match its lines to what the parser read";  // not expected
  }

  struct Entry {
    std::string name;
    std::string value;
    KeyLine where;
  };
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const po::option& o = parsed.options[i];
    const std::string at = path + ":" + std::to_string(lines[i].line) + ": ";
    const Result<std::string, std::string> name = resolve(o.string_key);
    if (!name) return at + name.error();
    if (!name->empty() && desc.find_nothrow(*name, false) == nullptr) {
      return at + "unknown option '" + o.string_key + "'";  // a resolver's mistake
    }
    if (name->empty()) continue;
    entries.push_back({*name, o.value.empty() ? "" : o.value.front(), lines[i]});
  }
  std::stable_partition(entries.begin(), entries.end(),
                        [](const Entry& e) { return e.where.in_section; });

  std::map<std::string, KeyLine> from_file;  // option -> the line that set it first
  for (const Entry& e : entries) {
    const std::string at = path + ":" + std::to_string(e.where.line) + ": ";
    const bool composing = desc.find(e.name, false).semantic()->is_composing();
    if (auto it = from_file.find(e.name); it != from_file.end()) {
      if (it->second.in_section != e.where.in_section) continue;  // the section's value wins
      if (!composing) {
        return at + "'" + e.name + "' is already set on line " + std::to_string(it->second.line);
      }
    } else if (vm.count(e.name) && !vm[e.name].defaulted()) {
      continue;  // given on the command line or in the environment
    }
    if (auto why = Store(desc, e.name, e.value, vm)) return at + *why;
    from_file.emplace(e.name, e.where);
  }
  return std::nullopt;
}

}  // namespace swarmcast::config
