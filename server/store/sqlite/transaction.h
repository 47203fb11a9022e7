#pragma once

#include <sqlite3.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "server/store/sqlite/handle.h"

namespace kq::store::sqlite {

// The prepared BEGIN IMMEDIATE / COMMIT / ROLLBACK statements of one
// connection, prepared once and reused by every Transaction on it. Owned by
// whoever owns the connection, and must not outlive it. Thread-compatible.
class TransactionStatements {
 public:
  // Prepares the three statements on `db`. Internal on failure.
  static absl::StatusOr<TransactionStatements> Prepare(sqlite3* db);

  sqlite3* db() const { return db_; }

 private:
  friend class Transaction;
  TransactionStatements() = default;

  sqlite3* db_ = nullptr;
  StmtHandle begin_;
  StmtHandle commit_;
  StmtHandle rollback_;
};

// A write transaction (BEGIN IMMEDIATE, so the write lock is taken up front
// and a busy database fails at Begin, not halfway through). It must be
// committed explicitly; one that is destroyed without a successful Commit()
// is rolled back, so every early `return` on an error undoes the partial
// work. Thread-compatible; movable, not copyable.
//
// Example:
//   KQ_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(statements));
//   KQ_RETURN_IF_ERROR(WriteRows());
//   KQ_RETURN_IF_ERROR(txn.Commit());
class Transaction {
 public:
  // Begins a transaction. Unavailable when another connection holds the
  // write lock past the busy timeout; Internal otherwise.
  static absl::StatusOr<Transaction> Begin(TransactionStatements& statements);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // Rolls back unless committed.
  ~Transaction();

  // Commits. Unavailable when SQLite is busy; Internal otherwise. After a
  // failed Commit the destructor rolls back.
  absl::Status Commit();

 private:
  explicit Transaction(TransactionStatements* statements)
      : statements_(statements) {}

  // Null once committed or moved from.
  TransactionStatements* statements_;
};

}  // namespace kq::store::sqlite
