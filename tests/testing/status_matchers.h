#pragma once

// GoogleTest matchers and macros for absl::Status and absl::StatusOr<T>,
// shaped like Envoy's test/test_common/status_utility.h (abseil 20220623 has
// no status_matchers.h of its own).
//
// Example:
//   EXPECT_OK(store->Commit(batch));
//   ASSERT_OK_AND_ASSIGN(LoadedState state, store->Load());
//   EXPECT_THAT(codec::FromProto(proto),
//               StatusIs(absl::StatusCode::kInvalidArgument,
//                        HasSubstr("nominalQuota")));
//   EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(3));

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kq::testing {
namespace internal {

// The status of a Status or StatusOr, so one matcher serves both.
inline const absl::Status& GetStatus(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Polymorphic implementation of StatusIs(code, message_matcher).
class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code,
                  ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  template <typename StatusType>
  operator ::testing::Matcher<StatusType>() const {  // NOLINT: implicit
    return ::testing::MakeMatcher(new Impl<StatusType>(code_, message_));
  }

 private:
  template <typename StatusType>
  class Impl : public ::testing::MatcherInterface<StatusType> {
   public:
    Impl(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
        : code_(code), message_(std::move(message)) {}

    bool MatchAndExplain(
        StatusType value,
        ::testing::MatchResultListener* listener) const override {
      const absl::Status& status = GetStatus(value);
      if (status.code() != code_) {
        *listener << "whose code is " << absl::StatusCodeToString(status.code())
                  << " (message \"" << status.message() << "\")";
        return false;
      }
      const std::string message(status.message());
      ::testing::StringMatchResultListener message_listener;
      if (!message_.MatchAndExplain(message, &message_listener)) {
        *listener << "whose message \"" << message << "\" does not match";
        if (!message_listener.str().empty()) {
          *listener << ", " << message_listener.str();
        }
        return false;
      }
      return true;
    }

    void DescribeTo(std::ostream* os) const override {
      *os << "has code " << absl::StatusCodeToString(code_)
          << " and a message that ";
      message_.DescribeTo(os);
    }

    void DescribeNegationTo(std::ostream* os) const override {
      *os << "does not have code " << absl::StatusCodeToString(code_)
          << " or has a message that ";
      message_.DescribeNegationTo(os);
    }

   private:
    absl::StatusCode code_;
    ::testing::Matcher<const std::string&> message_;
  };

  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

// Polymorphic implementation of IsOkAndHolds(value_matcher).
template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}

  template <typename StatusOrType>
  operator ::testing::Matcher<StatusOrType>() const {  // NOLINT: implicit
    using Value = typename std::decay_t<StatusOrType>::value_type;
    return ::testing::MakeMatcher(new Impl<StatusOrType>(
        ::testing::SafeMatcherCast<const Value&>(inner_)));
  }

 private:
  template <typename StatusOrType>
  class Impl : public ::testing::MatcherInterface<StatusOrType> {
   public:
    using Value = typename std::decay_t<StatusOrType>::value_type;
    explicit Impl(::testing::Matcher<const Value&> inner)
        : inner_(std::move(inner)) {}

    bool MatchAndExplain(
        StatusOrType value,
        ::testing::MatchResultListener* listener) const override {
      if (!value.ok()) {
        *listener << "which has status " << value.status();
        return false;
      }
      return ::testing::ExplainMatchResult(inner_, *value, listener);
    }

    void DescribeTo(std::ostream* os) const override {
      *os << "is OK and has a value that ";
      inner_.DescribeTo(os);
    }

    void DescribeNegationTo(std::ostream* os) const override {
      *os << "is not OK or has a value that ";
      inner_.DescribeNegationTo(os);
    }

   private:
    ::testing::Matcher<const Value&> inner_;
  };

  InnerMatcher inner_;
};

}  // namespace internal

// Matches a Status or StatusOr whose code is `code` and whose message
// matches `message` (a string is an exact match; use HasSubstr for parts).
inline internal::StatusIsMatcher StatusIs(
    absl::StatusCode code, ::testing::Matcher<const std::string&> message) {
  return internal::StatusIsMatcher(code, std::move(message));
}

// Matches a Status or StatusOr whose code is `code`, whatever the message.
inline internal::StatusIsMatcher StatusIs(absl::StatusCode code) {
  return internal::StatusIsMatcher(code, ::testing::_);
}

// Matches an OK Status or StatusOr.
inline internal::StatusIsMatcher IsOk() {
  return internal::StatusIsMatcher(absl::StatusCode::kOk, ::testing::_);
}

// Matches an OK StatusOr whose value matches `inner` (a value or matcher).
template <typename InnerMatcher>
internal::IsOkAndHoldsMatcher<InnerMatcher> IsOkAndHolds(InnerMatcher inner) {
  return internal::IsOkAndHoldsMatcher<InnerMatcher>(std::move(inner));
}

}  // namespace kq::testing

// Expects (or asserts) that a Status or StatusOr expression is OK, printing
// the status when it is not.
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::kq::testing::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::kq::testing::IsOk())

#define KQ_TESTING_CONCAT_INNER_(a, b) a##b
#define KQ_TESTING_CONCAT_(a, b) KQ_TESTING_CONCAT_INNER_(a, b)

// Asserts that a StatusOr expression is OK and moves its value into `lhs`,
// which may declare a variable: ASSERT_OK_AND_ASSIGN(auto x, MakeX());
#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                       \
  ASSERT_OK_AND_ASSIGN_IMPL_(KQ_TESTING_CONCAT_(kq_statusor_, __LINE__), lhs, \
                             expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  ASSERT_OK(statusor.status());                         \
  lhs = std::move(statusor).value()
