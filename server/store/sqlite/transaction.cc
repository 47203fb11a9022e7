#include "server/store/sqlite/transaction.h"

#include <utility>

#include "spdlog/spdlog.h"

#include "base/status_macros.h"

namespace kq::store::sqlite {

absl::StatusOr<TransactionStatements> TransactionStatements::Prepare(
    sqlite3* db) {
  TransactionStatements statements;
  statements.db_ = db;
  KQ_ASSIGN_OR_RETURN(statements.begin_,
                      sqlite::Prepare(db, "BEGIN IMMEDIATE"));
  KQ_ASSIGN_OR_RETURN(statements.commit_, sqlite::Prepare(db, "COMMIT"));
  KQ_ASSIGN_OR_RETURN(statements.rollback_, sqlite::Prepare(db, "ROLLBACK"));
  return statements;
}

absl::StatusOr<Transaction> Transaction::Begin(
    TransactionStatements& statements) {
  KQ_RETURN_IF_ERROR(
      Query(statements.db_, statements.begin_.get(), "begin transaction")
          .Run());
  return Transaction(&statements);
}

Transaction::Transaction(Transaction&& other) noexcept
    : statements_(std::exchange(other.statements_, nullptr)) {}

Transaction::~Transaction() {
  if (statements_ == nullptr) return;
  // A failed COMMIT may already have ended the transaction (SQLite rolls
  // back on some errors); ROLLBACK then has nothing to do.
  if (sqlite3_get_autocommit(statements_->db_)) return;
  absl::Status status =
      Query(statements_->db_, statements_->rollback_.get(), "rollback").Run();
  if (!status.ok()) {
    // Nothing can be returned from a destructor; SQLite rolls back on its
    // own when the connection closes, so the data stays consistent.
    spdlog::error("sqlite: {}", status.ToString());
  }
}

absl::Status Transaction::Commit() {
  if (statements_ == nullptr) {
    return absl::FailedPreconditionError("transaction already finished");
  }
  KQ_RETURN_IF_ERROR(
      Query(statements_->db_, statements_->commit_.get(), "commit").Run());
  statements_ = nullptr;
  return absl::OkStatus();
}

}  // namespace kq::store::sqlite
