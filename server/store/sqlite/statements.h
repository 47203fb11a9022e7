#pragma once

// Every SQL statement SqliteStore runs, in one place, next to the schema in
// migrations/0001_initial_schema.sql. Parameters are always bound (?N),
// never formatted into the text. Tests use these constants to check query
// plans.

namespace kq::store::sqlite {

inline constexpr char kPragmaJournalModeWal[] = "PRAGMA journal_mode = WAL";
inline constexpr char kPragmaSynchronousFull[] = "PRAGMA synchronous = FULL";
inline constexpr char kPragmaSynchronousNormal[] =
    "PRAGMA synchronous = NORMAL";
inline constexpr char kPragmaForeignKeys[] = "PRAGMA foreign_keys = ON";

// Objects.
inline constexpr char kUpsertObject[] =
    "INSERT INTO objects (kind, namespace, name, revision, spec) "
    "VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (kind, namespace, name) DO UPDATE SET "
    "revision = excluded.revision, spec = excluded.spec";
inline constexpr char kDeleteObject[] =
    "DELETE FROM objects WHERE kind = ?1 AND namespace = ?2 AND name = ?3";
inline constexpr char kSelectObjects[] =
    "SELECT kind, namespace, name, spec FROM objects";

// Workloads.
inline constexpr char kUpsertWorkload[] =
    "INSERT INTO workloads (namespace, name, uid, queue_name, priority, "
    "creation_time_us, state, finished, revision, body) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
    "ON CONFLICT (namespace, name) DO UPDATE SET "
    "uid = excluded.uid, queue_name = excluded.queue_name, "
    "priority = excluded.priority, "
    "creation_time_us = excluded.creation_time_us, state = excluded.state, "
    "finished = excluded.finished, revision = excluded.revision, "
    "body = excluded.body";
inline constexpr char kDeleteWorkload[] =
    "DELETE FROM workloads WHERE namespace = ?1 AND name = ?2";
inline constexpr char kSelectWorkload[] =
    "SELECT namespace, name, body FROM workloads "
    "WHERE namespace = ?1 AND name = ?2";
// Start-up reads unfinished workloads through workloads_by_finished.
inline constexpr char kSelectActiveWorkloads[] =
    "SELECT namespace, name, body FROM workloads WHERE finished = 0 "
    "ORDER BY namespace, name";
inline constexpr char kSelectFinishedWorkloads[] =
    "SELECT namespace, name, body FROM workloads WHERE finished = 1 "
    "ORDER BY namespace, name";
inline constexpr char kSelectFinishedWorkloadsInNamespace[] =
    "SELECT namespace, name, body FROM workloads "
    "WHERE finished = 1 AND namespace = ?1 ORDER BY name";

// Pod templates (migrations/0002_pod_templates.sql, 0003).
inline constexpr char kInsertPodTemplate[] =
    "INSERT OR REPLACE INTO pod_templates "
    "(namespace, name, pod_set, workload_uid, template) "
    "VALUES (?1, ?2, ?3, ?4, ?5)";
inline constexpr char kSelectPodTemplates[] =
    "SELECT pod_set, template FROM pod_templates "
    "WHERE namespace = ?1 AND name = ?2 AND workload_uid = ?3 "
    "ORDER BY pod_set";
inline constexpr char kDeleteWorkloadPodTemplates[] =
    "DELETE FROM pod_templates WHERE namespace = ?1 AND name = ?2";

// Events.
inline constexpr char kInsertEvent[] =
    "INSERT INTO events (revision, seq, type, kind, namespace, name, body) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
inline constexpr char kSelectEventsAfter[] =
    "SELECT revision, type, kind, namespace, name, body FROM events "
    "WHERE revision > ?1 ORDER BY revision, seq";
inline constexpr char kSelectOldestEventRevision[] =
    "SELECT MIN(revision) FROM events";
inline constexpr char kCountEvents[] = "SELECT COUNT(*) FROM events";
// The revision of the event at position ?1 (0-based) in log order.
inline constexpr char kSelectEventRevisionAt[] =
    "SELECT revision FROM events ORDER BY revision, seq LIMIT 1 OFFSET ?1";
inline constexpr char kDeleteEventsThrough[] =
    "DELETE FROM events WHERE revision <= ?1";

// Meta.
inline constexpr char kSelectRevision[] =
    "SELECT value FROM meta WHERE key = 'revision'";
inline constexpr char kUpdateRevision[] =
    "UPDATE meta SET value = ?1 WHERE key = 'revision'";

}  // namespace kq::store::sqlite
