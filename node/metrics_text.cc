#include "node/metrics_text.h"

#include <cmath>
#include <cstdio>

namespace swarmcast::node {
namespace {

void AppendEscaped(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// Integers (every counter here) print exactly, without an exponent, so
// a byte count up to 2^53 reads back as the number the report has.
void AppendValue(std::string& out, double v) {
  char buf[64];
  int n;
  if (std::isnan(v)) {
    n = std::snprintf(buf, sizeof buf, "NaN");
  } else if (std::isinf(v)) {
    n = std::snprintf(buf, sizeof buf, v > 0 ? "+Inf" : "-Inf");
  } else if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
    n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    n = std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  if (n > 0) out.append(buf, static_cast<std::size_t>(n));
}

}  // namespace

void MetricsText::Family(std::string_view name, Type type, std::string_view help) {
  family_.assign(name);
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // HELP text escapes only backslash and newline.
  for (char c : help) {
    if (c == '\\') {
      out_ += "\\\\";
    } else if (c == '\n') {
      out_ += "\\n";
    } else {
      out_ += c;
    }
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += type == Type::kCounter ? " counter\n" : " gauge\n";
}

void MetricsText::Sample(const MetricLabels& labels, double value) {
  out_ += family_;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      AppendEscaped(out_, v);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  AppendValue(out_, value);
  out_ += '\n';
}

}  // namespace swarmcast::node
