#pragma once

// kq's SQL schema migrations, embedded in the binary at build time from
// migrations/NNNN_<description>.sql (see migrations/README.md), so kqd never
// reads SQL from its working directory.

#include <vector>

namespace kq::migrations {

// One schema migration: the SQL that takes a database from schema version
// `version - 1` to `version`.
struct Migration {
  // The NNNN prefix of the file name: 1, 2, ... without gaps.
  int version;
  // The file name without directory and ".sql", e.g. "0001_initial_schema".
  const char* name;
  // The file's SQL: one or more statements.
  const char* sql;
};

// Every migration, in ascending version order. The vector is built once and
// never changes; it is safe to read from any thread.
const std::vector<Migration>& All();

}  // namespace kq::migrations
