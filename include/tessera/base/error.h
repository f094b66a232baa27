// Errors that reach the user. Tessera reports every failure by throwing tessera::Error (a std::runtime_error)
// whose message names the file (and line or field), flag, variable or peer involved and what was expected;
// nothing returns error codes. fail() formats such a message with fmt and throws it; it never returns.
// The CLI prints the message and exits non-zero; exceptions of libtorch and the standard library reach the user
// the same way, as one line (describe(), with_context()). Both are header-only, hold no state and may be used from any
// thread; an Error is an ordinary value that owns a copy of its message.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace tessera {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A peer that died, cannot be reached or did not answer in time: the job is
// broken, not the request. (Python raises it as ConnectionError.)
class PeerError : public Error {
 public:
  explicit PeerError(const std::string& message) : Error(message) {}
};

// An exception from libtorch or the standard library that escaped Tessera's
// own checks, re-thrown by with_context() with what Tessera was doing.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(message) {}
};

// The message of `e` for a user, on one line: libtorch's "Exception raised
// from ..." and its stack frames are dropped unless TESSERA_DEBUG=1 is set;
// std::bad_alloc reads "out of memory"; a tessera::Error is its message.
std::string describe(const std::exception& e);

// Runs `body` and returns its result. An exception that is not a
// tessera::Error becomes an InternalError "<context()>: <describe(e)>"; an
// InternalError from an inner with_context gets context() in front, so the
// message names the outermost activity first ("training step 3 of epoch 1
// (...): R-GCN layer 0, relation 2: <libtorch's message>"). `context` is
// called only on failure, so it may format freely. Tessera's own errors pass
// unchanged: they already say what was wrong.
template <typename Context, typename Body>
decltype(auto) with_context(Context&& context, Body&& body) {
  try {
    return body();
  } catch (const InternalError& e) {
    throw InternalError(context() + ": " + e.what());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InternalError(context() + ": " + describe(e));
  }
}

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_peer(fmt::format_string<Args...> format, Args&&... args) {
  throw PeerError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tessera
