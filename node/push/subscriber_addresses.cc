#include "node/push/subscriber_addresses.h"

namespace swarmcast::push {

std::string SubscriberAddresses::Normalize(std::string_view ip) {
  constexpr std::string_view kMapped = "::ffff:";
  if (ip.size() > kMapped.size() && ip.substr(0, kMapped.size()) == kMapped &&
      ip.find('.') != std::string_view::npos) {
    ip.remove_prefix(kMapped.size());
  }
  return std::string(ip);
}

void SubscriberAddresses::Add(std::string_view ip) {
  MutexLock lock(mutex_);
  ++count_[Normalize(ip)];
}

void SubscriberAddresses::Remove(std::string_view ip) {
  MutexLock lock(mutex_);
  auto it = count_.find(Normalize(ip));
  if (it != count_.end() && --it->second <= 0) count_.erase(it);
}

bool SubscriberAddresses::Contains(std::string_view ip) const {
  MutexLock lock(mutex_);
  return count_.contains(Normalize(ip));
}

}  // namespace swarmcast::push
