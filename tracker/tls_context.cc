#include "tracker/tls_context.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstring>

namespace swarmcast::tracker {
namespace {

namespace ssl = boost::asio::ssl;

constexpr std::size_t kMaxPemBytes = 1 << 20;

// Reads `path` (at most kMaxPemBytes), checking the mode of the very file
// read (fstat on the open descriptor, so a rename in between cannot swap
// it) when it holds a secret.
Result<std::string, std::string> ReadPem(const std::string& flag, const std::string& path,
                                         bool secret) {
  const std::string what = flag + " " + path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Unexpected(what + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Unexpected(what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Unexpected(what + ": not a regular file");
  if (static_cast<std::size_t>(st.st_size) > kMaxPemBytes) {
    return Unexpected(what + ": larger than 1 MiB, not a PEM file");
  }
  if (secret) {
    const bool group_may = (st.st_mode & S_IRWXG) != 0 && st.st_uid == 0;
    if ((st.st_mode & S_IRWXO) != 0 || ((st.st_mode & S_IRWXG) != 0 && !group_may)) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return Unexpected(what + ": the private key is readable by other users (mode " +
                        std::string(mode) + "); chmod 0600 it (0640 if root owns it and a " +
                        "group must read it)");
    }
  }
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unexpected(what + ": read failed: " + std::strerror(errno));
    if (n == 0) break;  // shrank under us: use what is there
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  if (out.find("-----BEGIN ") == std::string::npos) {
    return Unexpected(what + ": not a PEM file (no -----BEGIN line)");
  }
  return out;
}

// The key's PEM text is wiped however the load ends: OpenSSL keeps its
// own copy, and no other one should linger in freed memory.
struct WipedOnExit {
  std::string& text;
  ~WipedOnExit() { OPENSSL_cleanse(text.data(), text.size()); }
};

// An encrypted key would make OpenSSL's default callback prompt for a
// passphrase on the terminal, hanging a service: answer "none" instead.
int NoPassphrase(char*, int, int, void*) { return 0; }

// A validity warning, or empty. OpenSSL is the judge of "now" so that the
// tracker and its clients compare the same way.
std::string ValidityWarning(const std::string& cert_file, SSL_CTX* ctx) {
  X509* leaf = SSL_CTX_get0_certificate(ctx);
  if (leaf == nullptr) return {};
  if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0) {
    return "--tls-cert " + cert_file + ": the certificate has expired; clients will refuse it";
  }
  if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0) {
    return "--tls-cert " + cert_file + ": the certificate is not valid yet; clients will refuse it";
  }
  return {};
}

}  // namespace

Result<ServerTls, std::string> LoadServerTls(const std::string& cert_file,
                                             const std::string& key_file) {
  auto cert = ReadPem("--tls-cert", cert_file, false);
  if (!cert) return Unexpected(cert.error());
  auto key = ReadPem("--tls-key", key_file, true);
  if (!key) return Unexpected(key.error());
  WipedOnExit wipe{*key};

  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  // The version floor is set as a floor, not by switching old versions off
  // one by one, so a future OpenSSL's TLS 1.4 is allowed without a change.
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return Unexpected(std::string("TLS: cannot require TLS 1.2 or later"));
  }
  SSL_CTX_set_options(
      native, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_default_passwd_cb(native, NoPassphrase);
  // asio's ssl errors render OpenSSL's reason ("no start line", "bad
  // decrypt").
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(*cert), ec);
  if (ec) {
    return Unexpected("--tls-cert " + cert_file + ": no usable certificate (" + ec.message() + ")");
  }
  ctx->use_private_key(boost::asio::buffer(*key), ssl::context::pem, ec);
  const auto code = static_cast<unsigned long>(ec.value());
  if (ec &&
      (ERR_GET_LIB(code) != ERR_LIB_X509 || ERR_GET_REASON(code) != X509_R_KEY_VALUES_MISMATCH)) {
    return Unexpected("--tls-key " + key_file + ": no usable private key (" + ec.message() +
                      "); an encrypted key is not supported");
  }
  if (ec || SSL_CTX_check_private_key(native) != 1) {
    return Unexpected("--tls-key " + key_file +
                      " does not belong to the certificate in --tls-cert " + cert_file);
  }
  ServerTls out;
  out.context = std::move(ctx);
  if (std::string w = ValidityWarning(cert_file, native); !w.empty()) out.warnings.push_back(w);
  return out;
}

}  // namespace swarmcast::tracker
