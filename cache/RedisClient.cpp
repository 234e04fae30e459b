//===- RedisClient.cpp - Minimal RESP client for the remote cache ---------===//
//
// All socket I/O is non-blocking and waits in poll() against one deadline per
// command, so no peer can stall a compile for longer than the command timeout.
// Reply lengths are checked before anything is allocated for them, and bulk
// values grow only as their bytes actually arrive.
//
//===----------------------------------------------------------------------===//
#include "cache/RedisClient.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <new>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define CUVIL_REDIS_HAVE_EXCEPTIONS 1
#endif

namespace cuvil::cache {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct RedisClient::Deadline {
  Clock::time_point at;
  long long budgetMs; // for the "timed out after N ms" message
};

namespace {

constexpr size_t kChunkBytes = 256 * 1024;
// Simple-string and error lines are short in practice; a length or integer
// line holds at most 20 digits and a sign.
constexpr size_t kMaxTextLine = 64 * 1024;
constexpr size_t kMaxNumberLine = 32;

std::string errnoText(int err) { return std::strerror(err); }

/// `bytes` quoted safely for a message: control and non-ASCII bytes escaped,
/// long text cut, so hostile replies cannot garble a terminal or a log.
std::string printable(std::string_view bytes, size_t maxLen = 40) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < maxLen; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (bytes.size() > maxLen)
    out += "...";
  return out;
}

/// Strict RESP integer: optional '-', then 1 to 19 digits, no overflow.
bool parseInt64(std::string_view text, int64_t &out) {
  bool negative = !text.empty() && text[0] == '-';
  if (negative)
    text.remove_prefix(1);
  if (text.empty() || text.size() > 19)
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX))
    return false;
  out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

enum class Wait { Ready, TimedOut, Failed };

/// Waits for `events` on `fd` until `at`. Restarts after EINTR with the
/// remaining time, so signals neither cut the wait short nor stretch it.
Wait waitFor(int fd, short events, Clock::time_point at, int &err) {
  for (;;) {
    auto left = at - Clock::now();
    if (left <= Clock::duration::zero())
      return Wait::TimedOut;
    // Round up: a poll() that returned just before the deadline would spin.
    long long ms = std::chrono::ceil<milliseconds>(left).count();
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(ms, INT_MAX)));
    if (rc > 0)
      return Wait::Ready; // POLLERR/POLLHUP too: the next send/recv reports why
    if (rc == 0)
      continue;
    if (errno == EINTR)
      continue;
    err = errno;
    return Wait::Failed;
  }
}

int openSocket(int family, int type, int protocol) {
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
  return ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
#else
  int fd = ::socket(family, type, protocol);
  if (fd >= 0 && (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 ||
                  ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
#endif
}

#ifdef MSG_NOSIGNAL
constexpr int kSendFlags = MSG_NOSIGNAL | MSG_DONTWAIT;
#else
constexpr int kSendFlags = MSG_DONTWAIT; // SO_NOSIGPIPE is set on the socket instead
#endif

/// A getaddrinfo() call that the connecting thread may abandon at its
/// deadline: the state is shared, and whichever side finishes last frees it.
struct Resolution {
  std::string host, service;
  addrinfo hints{};
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  int rc = 0;
  int err = 0;
  addrinfo *result = nullptr;
  ~Resolution() {
    if (result)
      ::freeaddrinfo(result);
  }
};

void *resolveInThread(void *arg) {
  std::unique_ptr<std::shared_ptr<Resolution>> holder(
      static_cast<std::shared_ptr<Resolution> *>(arg));
  Resolution &r = **holder;
  addrinfo *result = nullptr;
  int rc = ::getaddrinfo(r.host.c_str(), r.service.c_str(), &r.hints, &result);
  int err = errno;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.rc = rc;
  r.err = err;
  r.result = result;
  r.finished = true;
  r.done.notify_all();
  return nullptr;
}

struct AddrList {
  addrinfo *head = nullptr;
  ~AddrList() {
    if (head)
      ::freeaddrinfo(head);
  }
};

/// Resolves `host` by `at`. getaddrinfo() has no timeout of its own, so a
/// name (not a numeric address) is resolved on a detached thread.
bool resolve(const std::string &host, int port, Clock::time_point at, AddrList &out,
             std::string &why, const std::string &timedOut) {
  auto r = std::make_shared<Resolution>();
  r->host = host;
  r->service = std::to_string(port);
  r->hints.ai_family = AF_UNSPEC;
  r->hints.ai_socktype = SOCK_STREAM;
  r->hints.ai_protocol = IPPROTO_TCP;
  r->hints.ai_flags = AI_NUMERICSERV;
  auto gaiText = [](int rc, int err) {
    return rc == EAI_SYSTEM ? errnoText(err) : std::string(::gai_strerror(rc));
  };
  in_addr ipv4;
  bool numeric = ::inet_pton(AF_INET, host.c_str(), &ipv4) == 1;
  pthread_t thread;
  bool threaded = false;
  if (!numeric) {
    pthread_attr_t attr;
    if (::pthread_attr_init(&attr) == 0) {
      ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      // The helper must not take signals meant for the program's own threads.
      sigset_t all, old;
      sigfillset(&all);
      ::pthread_sigmask(SIG_SETMASK, &all, &old);
      auto *arg = new std::shared_ptr<Resolution>(r);
      threaded = ::pthread_create(&thread, &attr, resolveInThread, arg) == 0;
      if (!threaded)
        delete arg;
      ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
      ::pthread_attr_destroy(&attr);
    }
  }
  if (!threaded) {
    // Numeric addresses need no lookup; without a thread, block as a fallback.
    if (numeric)
      r->hints.ai_flags |= AI_NUMERICHOST;
    int rc = ::getaddrinfo(host.c_str(), r->service.c_str(), &r->hints, &out.head);
    if (rc != 0) {
      why = "cannot resolve '" + host + "': " + gaiText(rc, errno);
      return false;
    }
    return true;
  }
  std::unique_lock<std::mutex> lock(r->mutex);
  if (!r->done.wait_until(lock, at, [&] { return r->finished; })) {
    why = "cannot resolve '" + host + "': " + timedOut;
    return false;
  }
  if (r->rc != 0) {
    why = "cannot resolve '" + host + "': " + gaiText(r->rc, r->err);
    return false;
  }
  out.head = r->result;
  r->result = nullptr;
  return true;
}

/// URL schemes are case-insensitive (RFC 3986).
bool startsWithNoCase(std::string_view text, std::string_view lowerPrefix) {
  if (text.size() < lowerPrefix.size())
    return false;
  for (size_t i = 0; i < lowerPrefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != lowerPrefix[i])
      return false;
  return true;
}

bool validHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

std::optional<RedisEndpoint> parseRedisUrlImpl(const std::string &url, std::string &error) {
  auto bad = [&](const std::string &why) -> std::optional<RedisEndpoint> {
    error = "--remote-cache: '" + printable(url, 200) + "' is not a redis://HOST:PORT address (" +
            why + ")";
    return std::nullopt;
  };
  std::string_view text(url);
  if (!text.empty() && (std::isspace(static_cast<unsigned char>(text.front())) ||
                        std::isspace(static_cast<unsigned char>(text.back()))))
    return bad("it has leading or trailing white space");
  if (!startsWithNoCase(text, "redis://")) {
    if (startsWithNoCase(text, "rediss://"))
      return bad("TLS (rediss://) is not supported");
    return bad(text.find("://") == std::string_view::npos ? "it does not start with redis://"
                                                          : "the scheme must be redis://");
  }
  std::string_view rest = text.substr(8);
  if (!rest.empty() && rest.back() == '/')
    rest.remove_suffix(1);
  if (rest.find('@') != std::string_view::npos)
    return bad("credentials are not supported");
  if (rest.find('/') != std::string_view::npos)
    return bad("a database number or path is not supported");
  if (!rest.empty() && rest[0] == '[')
    return bad("IPv6 addresses are not supported");
  size_t colon = rest.find(':');
  if (colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos)
    return bad("IPv6 addresses are not supported");
  std::string_view host = rest.substr(0, colon);
  if (host.empty())
    return bad("the host is missing");
  if (host.size() > 253)
    return bad("the host name is longer than 253 characters");
  for (char c : host)
    if (!validHostChar(c))
      return bad("invalid character '" + printable(std::string_view(&c, 1)) + "' in the host");
  if (host[0] == '-' || host[0] == '.')
    return bad("the host must start with a letter or digit");
  bool dotted = std::all_of(host.begin(), host.end(),
                            [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
  in_addr ipv4;
  if (dotted && ::inet_pton(AF_INET, std::string(host).c_str(), &ipv4) != 1)
    return bad("'" + std::string(host) + "' is not a valid IPv4 address");
  RedisEndpoint ep;
  ep.host = std::string(host);
  if (colon != std::string_view::npos) {
    std::string_view port = rest.substr(colon + 1);
    if (port.empty())
      return bad("the port after ':' is missing");
    int64_t value = 0;
    if (port.size() > 5 || port[0] == '-' || !parseInt64(port, value) || value < 1 || value > 65535)
      return bad("the port must be a number from 1 to 65535");
    ep.port = static_cast<int>(value);
  }
  return ep;
}

} // namespace

std::optional<RedisEndpoint> parseRedisUrl(const std::string &url, std::string &error) {
#ifdef CUVIL_REDIS_HAVE_EXCEPTIONS
  try {
    return parseRedisUrlImpl(url, error);
  } catch (...) {
    error = "--remote-cache: out of memory parsing the address";
    return std::nullopt;
  }
#else
  return parseRedisUrlImpl(url, error);
#endif
}

//===----------------------------------------------------------------------===//
// Connection
//===----------------------------------------------------------------------===//

std::unique_ptr<RedisClient> RedisClient::connect(const RedisEndpoint &endpoint,
                                                  milliseconds timeout, std::string &error) {
  auto impl = [&]() -> std::unique_ptr<RedisClient> {
    std::string name = "redis://" + endpoint.host + ":" + std::to_string(endpoint.port);
    auto fail = [&](const std::string &why) -> std::unique_ptr<RedisClient> {
      error = "cannot reach " + name + ": " + why;
      return nullptr;
    };
    if (endpoint.host.empty())
      return fail("no host given");
    if (endpoint.port < 1 || endpoint.port > 65535)
      return fail("the port must be from 1 to 65535");
    timeout = std::max(timeout, milliseconds(1));
    Clock::time_point at = Clock::now() + timeout;
    std::string timedOut = "timed out after " + std::to_string(timeout.count()) + " ms";

    AddrList addrs;
    std::string why;
    if (!resolve(endpoint.host, endpoint.port, at, addrs, why, timedOut))
      return fail(why);
    why = "no usable address";
    // Try each address in turn (e.g. "localhost" as ::1, then 127.0.0.1).
    for (addrinfo *ai = addrs.head; ai; ai = ai->ai_next) {
      int fd = openSocket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
      if (fd < 0) {
        why = errnoText(errno);
        continue;
      }
      // A non-blocking connect that is interrupted keeps going in the
      // background, so EINTR is waited out like EINPROGRESS, not retried.
      int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
      int err = rc == 0 ? 0 : errno;
      if (rc != 0 && (err == EINPROGRESS || err == EINTR)) {
        Wait w = waitFor(fd, POLLOUT, at, err);
        if (w == Wait::TimedOut) {
          ::close(fd);
          return fail(timedOut);
        }
        if (w == Wait::Ready) {
          socklen_t len = sizeof(err);
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        }
      }
      if (err != 0) {
        why = errnoText(err);
        ::close(fd);
        continue;
      }
      // Commands are single small writes or large ones; Nagle only adds latency.
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
#ifdef SO_NOSIGPIPE
      ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
      return std::unique_ptr<RedisClient>(new RedisClient(fd, std::move(name)));
    }
    return fail(why);
  };
#ifdef CUVIL_REDIS_HAVE_EXCEPTIONS
  try {
    return impl();
  } catch (...) {
    error = "cannot reach redis://" + endpoint.host + ": out of memory";
    return nullptr;
  }
#else
  return impl();
#endif
}

RedisClient::RedisClient(int fd, std::string name)
    : fd_(fd), name_(std::move(name)), chunk_(new char[kChunkBytes]) {}

RedisClient::~RedisClient() {
  if (fd_ >= 0)
    ::close(fd_);
}

void RedisClient::setCommandTimeout(milliseconds t) {
  commandTimeout_ = std::max(t, milliseconds(1));
}

void RedisClient::breakConnection(const std::string &why) {
  if (broken_.empty())
    broken_ = why.empty() ? "unknown failure" : why;
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  std::string().swap(rbuf_);
  rpos_ = 0;
}

//===----------------------------------------------------------------------===//
// I/O
//===----------------------------------------------------------------------===//

bool RedisClient::sendAll(const std::vector<std::string_view> &pieces, const Deadline &deadline,
                          std::string &why) {
  // One gathered write: a large value is sent from the caller's buffer
  // without being copied next to its framing.
  std::vector<iovec> iov;
  iov.reserve(pieces.size());
  for (std::string_view p : pieces)
    if (!p.empty())
      iov.push_back({const_cast<char *>(p.data()), p.size()});
  size_t first = 0;
  while (first < iov.size()) {
    msghdr msg{};
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
    ssize_t n = ::sendmsg(fd_, &msg, kSendFlags);
    if (n < 0) {
      int err = errno;
      if (err == EINTR)
        continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        Wait w = waitFor(fd_, POLLOUT, deadline.at, err);
        if (w == Wait::Ready)
          continue;
        if (w == Wait::TimedOut) {
          why = "timed out after " + std::to_string(deadline.budgetMs) + " ms sending the command";
          return false;
        }
      }
      why = "send failed: " + errnoText(err);
      return false;
    }
    size_t sent = static_cast<size_t>(n);
    while (first < iov.size() && sent >= iov[first].iov_len)
      sent -= iov[first++].iov_len;
    if (sent > 0) {
      iov[first].iov_base = static_cast<char *>(iov[first].iov_base) + sent;
      iov[first].iov_len -= sent;
    }
  }
  return true;
}

bool RedisClient::receive(const Deadline &deadline, size_t &n, std::string &why) {
  for (;;) {
    ssize_t got = ::recv(fd_, chunk_.get(), kChunkBytes, MSG_DONTWAIT);
    if (got > 0) {
      n = static_cast<size_t>(got);
      return true;
    }
    if (got == 0) {
      why = "the server closed the connection";
      return false;
    }
    int err = errno;
    if (err == EINTR)
      continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      Wait w = waitFor(fd_, POLLIN, deadline.at, err);
      if (w == Wait::Ready)
        continue;
      if (w == Wait::TimedOut) {
        why = "timed out after " + std::to_string(deadline.budgetMs) + " ms waiting for the reply";
        return false;
      }
    }
    why = "receive failed: " + errnoText(err);
    return false;
  }
}

bool RedisClient::fill(const Deadline &deadline, std::string &why) {
  if (rpos_ == rbuf_.size()) {
    rbuf_.clear();
    rpos_ = 0;
  } else if (rpos_ > kChunkBytes) {
    rbuf_.erase(0, rpos_);
    rpos_ = 0;
  }
  size_t n = 0;
  if (!receive(deadline, n, why))
    return false;
  rbuf_.append(chunk_.get(), n);
  return true;
}

bool RedisClient::readLine(const Deadline &deadline, size_t maxLen, std::string &line,
                           std::string &why) {
  size_t scanned = 0; // bytes after rpos_ already known to hold no CRLF
  for (;;) {
    size_t from = rpos_ + (scanned > 0 ? scanned - 1 : 0);
    size_t crlf = rbuf_.find("\r\n", from);
    if (crlf != std::string::npos && crlf - rpos_ <= maxLen) {
      line.assign(rbuf_, rpos_, crlf - rpos_);
      rpos_ = crlf + 2;
      return true;
    }
    scanned = rbuf_.size() - rpos_;
    if (crlf != std::string::npos || scanned > maxLen + 1) {
      why = "protocol error: reply line longer than " + std::to_string(maxLen) +
            " bytes starting '" + printable(std::string_view(rbuf_).substr(rpos_)) + "'";
      return false;
    }
    if (!fill(deadline, why))
      return false;
  }
}

bool RedisClient::readBulk(size_t len, const Deadline &deadline, std::string &out,
                           std::string &why) {
  out.clear();
  size_t buffered = std::min(rbuf_.size() - rpos_, len);
  out.append(rbuf_, rpos_, buffered);
  rpos_ += buffered;
  // The rest goes from the scratch buffer straight into `out`, which grows
  // only as bytes arrive; whatever follows the value (its CRLF) goes to rbuf_.
  while (out.size() < len) {
    size_t n = 0;
    if (!receive(deadline, n, why))
      return false;
    size_t take = std::min(n, len - out.size());
    out.append(chunk_.get(), take);
    if (take < n) {
      rbuf_.assign(chunk_.get() + take, n - take);
      rpos_ = 0;
    }
  }
  while (rbuf_.size() - rpos_ < 2)
    if (!fill(deadline, why))
      return false;
  if (rbuf_.compare(rpos_, 2, "\r\n") != 0) {
    why = "protocol error: a " + std::to_string(len) + "-byte value is followed by '" +
          printable(std::string_view(rbuf_).substr(rpos_, 8)) + "', not CRLF";
    return false;
  }
  rpos_ += 2;
  return true;
}

bool RedisClient::readReply(Expect expect, const Deadline &deadline,
                            std::optional<std::string> *bulk, std::string &why, bool &fatal) {
  fatal = true;
  if (rpos_ == rbuf_.size() && !fill(deadline, why))
    return false;
  char type = rbuf_[rpos_];
  if (type != '+' && type != '-' && type != ':' && type != '$') {
    why = "protocol error: unexpected reply '" + printable(std::string_view(rbuf_).substr(rpos_)) +
          "'";
    return false;
  }
  std::string line;
  bool numeric = type == ':' || type == '$';
  if (!readLine(deadline, numeric ? kMaxNumberLine : kMaxTextLine, line, why))
    return false;
  std::string_view body = std::string_view(line).substr(1);
  int64_t number = 0;
  if (numeric && !parseInt64(body, number)) {
    why = "protocol error: bad number in reply '" + printable(line) + "'";
    return false;
  }
  // From here on the whole reply is consumed unless fatal is set again.
  fatal = false;
  switch (type) {
  case '-':
    why = "error reply: " + printable(body, 300);
    return false;
  case '+':
    if (expect == Expect::Ok && body == "OK")
      return true;
    why = "unexpected reply '" + printable(line) + "'";
    return false;
  case ':':
    why = "unexpected integer reply '" + printable(line) + "'";
    return false;
  default:
    break;
  }
  if (number == -1) {
    if (expect == Expect::BulkOrNil) {
      bulk->reset();
      return true;
    }
    why = "unexpected nil reply";
    return false;
  }
  fatal = true;
  if (number < 0) {
    why = "protocol error: negative length in reply '" + printable(line) + "'";
    return false;
  }
  // Checked before reading so a hostile length costs nothing.
  if (static_cast<uint64_t>(number) > maxValueBytes_) {
    why = "reply value of " + std::to_string(number) + " bytes exceeds the limit of " +
          std::to_string(maxValueBytes_) + " bytes";
    return false;
  }
  std::string value;
  if (!readBulk(static_cast<size_t>(number), deadline, value, why))
    return false;
  fatal = false;
  if (expect != Expect::BulkOrNil) {
    why = "unexpected bulk reply";
    return false;
  }
  *bulk = std::move(value);
  return true;
}

bool RedisClient::command(const char *verb, const std::vector<std::string_view> &args,
                          Expect expect, std::optional<std::string> *bulk, std::string &error) {
  std::string prefix = name_ + ": " + verb + ": ";
  if (!broken_.empty()) {
    error = prefix + "connection unusable after an earlier failure (" + broken_ + ")";
    return false;
  }
  if (rpos_ != rbuf_.size()) {
    // Redis sends nothing unasked; extra bytes mean the stream is out of step.
    breakConnection("unexpected extra bytes from the server");
    error = prefix + broken_;
    return false;
  }
  Deadline deadline{Clock::now() + commandTimeout_,
                    static_cast<long long>(commandTimeout_.count())};

  // RESP array of bulk strings: *N CRLF, then $len CRLF bytes CRLF per arg.
  std::vector<std::string> framing;
  framing.reserve(args.size() + 2); // no reallocation: `pieces` points into it
  std::vector<std::string_view> pieces;
  framing.push_back("*" + std::to_string(args.size()) + "\r\n");
  pieces.push_back(framing.back());
  for (size_t i = 0; i < args.size(); ++i) {
    framing.push_back((i ? "\r\n$" : "$") + std::to_string(args[i].size()) + "\r\n");
    pieces.push_back(framing.back());
    pieces.push_back(args[i]);
  }
  framing.push_back("\r\n");
  pieces.push_back(framing.back());

  std::string why;
  if (!sendAll(pieces, deadline, why)) {
    breakConnection(std::string(verb) + ": " + why);
    error = prefix + why;
    return false;
  }
  bool fatal = false;
  if (readReply(expect, deadline, bulk, why, fatal))
    return true;
  if (fatal)
    breakConnection(std::string(verb) + ": " + why);
  error = prefix + why;
  return false;
}

bool RedisClient::get(const std::string &key, std::optional<std::string> &value,
                      std::string &error) {
#ifdef CUVIL_REDIS_HAVE_EXCEPTIONS
  try {
    return command("GET", {"GET", key}, Expect::BulkOrNil, &value, error);
  } catch (...) {
    // Most likely std::bad_alloc for a large value; the reply is half read.
    breakConnection("GET: out of memory");
    error = name_ + ": GET: out of memory";
    return false;
  }
#else
  return command("GET", {"GET", key}, Expect::BulkOrNil, &value, error);
#endif
}

bool RedisClient::set(const std::string &key, const std::string &value, std::string &error) {
#ifdef CUVIL_REDIS_HAVE_EXCEPTIONS
  try {
    return command("SET", {"SET", key, value}, Expect::Ok, nullptr, error);
  } catch (...) {
    breakConnection("SET: out of memory");
    error = name_ + ": SET: out of memory";
    return false;
  }
#else
  return command("SET", {"SET", key, value}, Expect::Ok, nullptr, error);
#endif
}

} // namespace cuvil::cache
