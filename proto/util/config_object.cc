#include "proto/util/config_object.h"

namespace kq::proto_util {

const v1::ObjectMeta& MetaOf(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kNamespace:
      return object.namespace_().metadata();
    case v1::ConfigObject::kResourceFlavor:
      return object.resource_flavor().metadata();
    case v1::ConfigObject::kClusterQueue:
      return object.cluster_queue().metadata();
    case v1::ConfigObject::kCohort:
      return object.cohort().metadata();
    case v1::ConfigObject::kLocalQueue:
      return object.local_queue().metadata();
    case v1::ConfigObject::kWorkloadPriorityClass:
      return object.workload_priority_class().metadata();
    case v1::ConfigObject::kAdmissionCheck:
      return object.admission_check().metadata();
    case v1::ConfigObject::kProvisioningRequestConfig:
      return object.provisioning_request_config().metadata();
    case v1::ConfigObject::kMultiKueueConfig:
      return object.multi_kueue_config().metadata();
    case v1::ConfigObject::kMultiKueueCluster:
      return object.multi_kueue_cluster().metadata();
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return v1::ObjectMeta::default_instance();
}

v1::ObjectMeta* MutableMetaOf(v1::ConfigObject* object) {
  switch (object->kind_case()) {
    case v1::ConfigObject::kNamespace:
      return object->mutable_namespace_()->mutable_metadata();
    case v1::ConfigObject::kResourceFlavor:
      return object->mutable_resource_flavor()->mutable_metadata();
    case v1::ConfigObject::kClusterQueue:
      return object->mutable_cluster_queue()->mutable_metadata();
    case v1::ConfigObject::kCohort:
      return object->mutable_cohort()->mutable_metadata();
    case v1::ConfigObject::kLocalQueue:
      return object->mutable_local_queue()->mutable_metadata();
    case v1::ConfigObject::kWorkloadPriorityClass:
      return object->mutable_workload_priority_class()->mutable_metadata();
    case v1::ConfigObject::kAdmissionCheck:
      return object->mutable_admission_check()->mutable_metadata();
    case v1::ConfigObject::kProvisioningRequestConfig:
      return object->mutable_provisioning_request_config()->mutable_metadata();
    case v1::ConfigObject::kMultiKueueConfig:
      return object->mutable_multi_kueue_config()->mutable_metadata();
    case v1::ConfigObject::kMultiKueueCluster:
      return object->mutable_multi_kueue_cluster()->mutable_metadata();
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return nullptr;
}

}  // namespace kq::proto_util
