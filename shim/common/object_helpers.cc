#include "shim/common/object_helpers.h"

#include <openssl/evp.h>

namespace kq::shim {

std::string Sha1Hex(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha1(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

const nlohmann::json* Field(const nlohmann::json& object,
                            absl::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

nlohmann::json TolerationToJson(const v1::Toleration& toleration) {
  nlohmann::json out = nlohmann::json::object();
  if (!toleration.key().empty()) out["key"] = toleration.key();
  if (!toleration.operator_().empty()) out["operator"] = toleration.operator_();
  if (!toleration.value().empty()) out["value"] = toleration.value();
  if (!toleration.effect().empty()) out["effect"] = toleration.effect();
  if (toleration.has_toleration_seconds()) {
    out["tolerationSeconds"] = toleration.toleration_seconds();
  }
  return out;
}

}  // namespace kq::shim
