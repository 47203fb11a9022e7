#pragma once

// The standard process metrics every Prometheus client library exports
// (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds, process_threads), read from /proc at scrape
// time. Linux only; on a read error the family is left out.

#include <vector>

#include "prometheus/metric_family.h"

namespace kq::metrics {

std::vector<prometheus::MetricFamily> CollectProcessMetrics();

}  // namespace kq::metrics
