//===- RedisClientTest.cpp - RESP client against real and fake servers ----===//
//
// Round trips run against a private redis-server started on a free loopback
// port (skipped, with a warning, where none is installed); failure modes run
// against in-process fake servers that stay silent, never read, hang up or
// answer garbage.
//
//===----------------------------------------------------------------------===//
#include "cache/RedisClient.h"

#include "CatchCompat.h"

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>
#ifdef __linux__
#include <sys/prctl.h>
#endif

using namespace cuvil::cache;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

long long msSince(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Deterministic bytes covering every byte value, including NUL and CRLF.
std::string binaryBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<char>(rng() & 0xff);
  return out;
}

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

/// A listening socket on 127.0.0.1 at a kernel-chosen port, or -1.
int listenLoopback(int &port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(a.sin_port);
  return fd;
}

/// A loopback port that nothing listens on at the time of asking.
int freePort() {
  int port = 0;
  int fd = listenLoopback(port);
  if (fd < 0)
    return 0;
  ::close(fd);
  return port;
}

bool canConnect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  sockaddr_in a = loopback(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0;
  ::close(fd);
  return ok;
}

/// $CUVIL_TEST_REDIS_SERVER when set (a path; empty skips), else
/// redis-server on $PATH or in the usual places; "" when there is none.
std::string findRedisServer() {
  if (const char *exe = std::getenv("CUVIL_TEST_REDIS_SERVER"))
    return *exe && ::access(exe, X_OK) == 0 ? exe : "";
  std::vector<std::string> dirs;
  if (const char *path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty())
        dirs.push_back(dir);
  }
  dirs.push_back("/usr/bin");
  dirs.push_back("/usr/local/bin");
  for (const std::string &dir : dirs) {
    std::string exe = dir + "/redis-server";
    if (::access(exe.c_str(), X_OK) == 0)
      return exe;
  }
  return "";
}

/// A private redis-server, killed (and its directory removed) on destruction
/// so a failing check cannot leave it running. PR_SET_PDEATHSIG covers the
/// test process dying without unwinding.
class RedisServer {
public:
  RedisServer() = default;
  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;
  ~RedisServer() {
    stop();
    if (!dir_.empty()) {
      if (DIR *d = ::opendir(dir_.c_str())) {
        while (dirent *e = ::readdir(d))
          if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
            ::unlink((dir_ + "/" + e->d_name).c_str());
        ::closedir(d);
      }
      ::rmdir(dir_.c_str());
    }
  }

  /// Starts it and waits until it accepts connections; false with failure().
  bool start(const std::string &exe) {
    char tmpl[] = "/tmp/cuvil-redis-test-XXXXXX";
    if (!::mkdtemp(tmpl)) {
      failure_ = std::string("mkdtemp: ") + std::strerror(errno);
      return false;
    }
    dir_ = tmpl;
    // A port found free may be taken before redis binds it: retry a few.
    for (int attempt = 0; attempt < 3; ++attempt)
      if (startOnce(exe))
        return true;
    return false;
  }

  int port() const { return port_; }
  const std::string &failure() const { return failure_; }

private:
  bool startOnce(const std::string &exe) {
    port_ = freePort();
    if (port_ == 0) {
      failure_ = "no free loopback port";
      return false;
    }
    std::string log = dir_ + "/redis.log";
    // Everything the child needs is prepared before fork(): after it, only
    // async-signal-safe calls are allowed (the test process has threads).
    std::vector<std::string> args = {exe, "--port", std::to_string(port_), "--bind", "127.0.0.1"};
    for (const char *opt : {"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir"})
      args.push_back(opt);
    args.push_back(dir_);
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      failure_ = std::string("fork: ") + std::strerror(errno);
      return false;
    }
    if (pid_ == 0) {
#ifdef __linux__
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent)
        ::_exit(126);
#else
      (void)parent;
#endif
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    auto until = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        failure_ = "redis-server exited early: " + text.str();
        return false;
      }
      if (canConnect(port_))
        return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    failure_ = "redis-server did not accept connections within 10 s";
    stop();
    return false;
  }

  void stop() {
    if (pid_ <= 0)
      return;
    ::kill(pid_, SIGTERM);
    auto until = Clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > until) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
  std::string failure_;
};

/// Skips the rest of a test case, visibly, where redis-server is missing
/// (Catch2 v2 has no SKIP).
#define START_REDIS_OR_SKIP(server)                                                                \
  RedisServer server;                                                                              \
  {                                                                                                \
    std::string exe = findRedisServer();                                                           \
    if (exe.empty()) {                                                                             \
      WARN("redis-server not found: skipped");                                                     \
      return;                                                                                      \
    }                                                                                              \
    if (!server.start(exe))                                                                        \
      FAIL("cannot start " << exe << ": " << server.failure());                                    \
  }

/// A misbehaving Redis on a loopback port, run on its own thread.
///   Answer: answers `reply` to every chunk of request it receives.
///   Silent: reads requests, never answers.
///   Deaf:   never accepts, so nothing is read (the kernel still completes
///           the handshake, and its buffers fill up).
///   HangUp: accepts, then closes at once.
class FakeServer {
public:
  enum class Mode { Answer, Silent, Deaf, HangUp };

  explicit FakeServer(Mode mode, std::string reply = "") : mode_(mode), reply_(std::move(reply)) {
    listenFd_ = listenLoopback(port_);
    if (listenFd_ >= 0 && mode_ != Mode::Deaf)
      thread_ = std::thread([this] { run(); });
  }
  FakeServer(const FakeServer &) = delete;
  FakeServer &operator=(const FakeServer &) = delete;
  ~FakeServer() {
    stop_ = true;
    if (thread_.joinable())
      thread_.join();
    if (listenFd_ >= 0)
      ::close(listenFd_);
  }

  bool ok() const { return listenFd_ >= 0; }
  int port() const { return port_; }
  RedisEndpoint endpoint() const { return {"127.0.0.1", port_}; }
  /// Whether the client side of an accepted connection has been closed.
  bool peerClosed() const { return peerClosed_; }

private:
  void run() {
    // Signals aimed at the test (see the EINTR case) must reach its thread.
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, nullptr);
    int conn = -1;
    std::string pending; // request bytes not yet answered
    while (!stop_) {
      pollfd p{conn >= 0 ? conn : listenFd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0)
        continue;
      if (conn < 0) {
        conn = ::accept(listenFd_, nullptr, nullptr);
        if (conn >= 0 && mode_ == Mode::HangUp) {
          ::close(conn);
          conn = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t n = ::recv(conn, buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno != EINTR)) {
        peerClosed_ = true;
        ::close(conn);
        conn = -1;
        continue;
      }
      if (n > 0 && mode_ == Mode::Answer) {
        pending.append(buf, static_cast<size_t>(n));
        while (takeRequest(pending))
          sendAll(conn, reply_);
      }
    }
    if (conn >= 0)
      ::close(conn);
  }

  /// Removes one complete RESP request (an array of bulk strings) from the
  /// front of `buf`; false while it is incomplete. One answer per request
  /// keeps the test independent of how TCP splits the bytes.
  static bool takeRequest(std::string &buf) {
    size_t pos = 0;
    auto number = [&](char type, long long &out) {
      size_t eol = buf.find("\r\n", pos);
      if (pos >= buf.size() || buf[pos] != type || eol == std::string::npos)
        return false;
      out = std::atoll(buf.substr(pos + 1, eol - pos - 1).c_str());
      pos = eol + 2;
      return true;
    };
    long long count = 0;
    if (!number('*', count))
      return false;
    for (long long i = 0; i < count; ++i) {
      long long len = 0;
      if (!number('$', len) || buf.size() < pos + static_cast<size_t>(len) + 2)
        return false;
      pos += static_cast<size_t>(len) + 2;
    }
    buf.erase(0, pos);
    return true;
  }

  static void sendAll(int fd, const std::string &bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      done += static_cast<size_t>(n);
    }
  }

  Mode mode_;
  std::string reply_;
  int listenFd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> peerClosed_{false};
  std::thread thread_;
};

std::unique_ptr<RedisClient> connectTo(const RedisEndpoint &ep) {
  std::string error;
  auto client = RedisClient::connect(ep, milliseconds(2000), error);
  INFO(error);
  REQUIRE(client);
  return client;
}

} // namespace

//===----------------------------------------------------------------------===//
// Addresses
//===----------------------------------------------------------------------===//

TEST_CASE("redis client: parseRedisUrl accepts redis://HOST[:PORT][/]", "[cache][redis]") {
  struct Case {
    const char *url;
    const char *host;
    int port;
  } cases[] = {
      {"redis://localhost", "localhost", 6379},
      {"redis://localhost/", "localhost", 6379},
      {"redis://127.0.0.1:6380", "127.0.0.1", 6380},
      {"redis://127.0.0.1:6380/", "127.0.0.1", 6380},
      {"redis://cache-01.build.example.com:7000", "cache-01.build.example.com", 7000},
      {"redis://redis_cache:1", "redis_cache", 1},
      {"REDIS://Host:65535", "Host", 65535},
  };
  for (const Case &c : cases) {
    std::string error;
    auto ep = parseRedisUrl(c.url, error);
    INFO(c.url << ": " << error);
    REQUIRE(ep);
    CHECK(ep->host == c.host);
    CHECK(ep->port == c.port);
    CHECK(error.empty());
  }
}

TEST_CASE("redis client: parseRedisUrl rejects other text with a clear error", "[cache][redis]") {
  struct Case {
    const char *url;
    const char *why;
  } cases[] = {
      {"", "does not start with redis://"},
      {"localhost:6379", "does not start with redis://"},
      {"http://x", "the scheme must be redis://"},
      {"rediss://x:6380", "TLS"},
      {" redis://x", "leading or trailing white space"},
      {"redis://x:6379 ", "leading or trailing white space"},
      {"redis://", "the host is missing"},
      {"redis:///", "the host is missing"},
      {"redis://:6379", "the host is missing"},
      {"redis://h:", "port after ':' is missing"},
      {"redis://h:0", "from 1 to 65535"},
      {"redis://h:65536", "from 1 to 65535"},
      {"redis://h:-1", "from 1 to 65535"},
      {"redis://h:+1", "from 1 to 65535"},
      {"redis://h:99999999999999999999", "from 1 to 65535"},
      {"redis://h:12ab", "from 1 to 65535"},
      {"redis://user:pw@h:6379", "credentials"},
      {"redis://h:6379/0", "database number or path"},
      {"redis://h:6379//", "database number or path"},
      {"redis://[::1]:6379", "IPv6"},
      {"redis://::1", "IPv6"},
      {"redis://h h:1", "invalid character ' '"},
      {"redis://h:6379?db=1", "from 1 to 65535"},
      {"redis://h?x", "invalid character '?'"},
      {"redis://-h", "must start with a letter or digit"},
      {"redis://300.1.2.3:6379", "not a valid IPv4 address"},
      {"redis://1.2.3:6379", "not a valid IPv4 address"},
  };
  for (const Case &c : cases) {
    std::string error;
    auto ep = parseRedisUrl(c.url, error);
    INFO("'" << c.url << "' gave: " << error);
    CHECK(!ep);
    CHECK(contains(error, std::string("'") + c.url + "'"));
    CHECK(contains(error, "is not a redis://HOST:PORT address"));
    CHECK(contains(error, c.why));
  }
  std::string error;
  CHECK(!parseRedisUrl("http://x", error));
  CHECK(error == "--remote-cache: 'http://x' is not a redis://HOST:PORT address (the scheme must "
                 "be redis://)");
  // Control bytes in the text are escaped, not echoed raw.
  CHECK(!parseRedisUrl(std::string("redis://a\nb\x01", 12), error));
  CHECK(contains(error, "'redis://a\\nb\\x01'"));
}

//===----------------------------------------------------------------------===//
// A real redis-server
//===----------------------------------------------------------------------===//

TEST_CASE("redis client: SET then GET round-trips binary values", "[cache][redis]") {
  START_REDIS_OR_SKIP(server);
  auto client = connectTo({"127.0.0.1", server.port()});
  std::string error;
  std::optional<std::string> value;

  // NUL, CR, LF and RESP framing inside the value and the key.
  std::string small = std::string("a\0b\r\n$-1\r\n*2\r\n\0", 16) + binaryBytes(4096, 1);
  std::string key = std::string("k\0ey\r\n", 6);
  REQUIRE(client->set(key, small, error));
  REQUIRE(client->get(key, value, error));
  REQUIRE(value);
  CHECK(value->size() == small.size());
  CHECK((*value == small));

  // Empty values are values, not absence.
  REQUIRE(client->set("empty", "", error));
  REQUIRE(client->get("empty", value, error));
  REQUIRE(value);
  CHECK(value->empty());

  // Overwrite, and many commands in a row stay in step with the server.
  for (int i = 0; i < 200; ++i) {
    std::string k = "key" + std::to_string(i % 10);
    std::string v = binaryBytes(static_cast<size_t>(i) * 37, static_cast<unsigned>(i));
    REQUIRE(client->set(k, v, error));
    REQUIRE(client->get(k, value, error));
    REQUIRE(value);
    REQUIRE((*value == v));
  }

  // A 32 MB value, several times the socket buffers.
  std::string big = binaryBytes(32u << 20, 7);
  auto t0 = Clock::now();
  INFO(error);
  REQUIRE(client->set("big", big, error));
  REQUIRE(client->get("big", value, error));
  REQUIRE(value);
  CHECK(value->size() == big.size());
  CHECK((*value == big));
  CAPTURE(msSince(t0));

  // A second client sees the same data (it is really on the server).
  auto other = connectTo({"127.0.0.1", server.port()});
  REQUIRE(other->get(key, value, error));
  REQUIRE(value);
  CHECK((*value == small));

  // A value over the client's bound is refused, and the refusal is final.
  other->setMaxValueBytes(1024);
  CHECK(!other->get(key, value, error));
  CHECK(contains(error, "exceeds the limit of 1024 bytes"));
  CHECK(!other->get("empty", value, error));
  CHECK(contains(error, "unusable"));
}

TEST_CASE("redis client: GET of an absent key is nullopt", "[cache][redis]") {
  START_REDIS_OR_SKIP(server);
  auto client = connectTo({"127.0.0.1", server.port()});
  std::string error;
  std::optional<std::string> value = std::string("stale");
  REQUIRE(client->get("no-such-key", value, error));
  CHECK(!value);
  CHECK(error.empty());
  // Still usable afterwards.
  REQUIRE(client->set("now-there", "x", error));
  REQUIRE(client->get("now-there", value, error));
  REQUIRE(value);
  CHECK(*value == "x");
}

TEST_CASE("redis client: connects by host name", "[cache][redis]") {
  START_REDIS_OR_SKIP(server);
  // "localhost" may resolve to ::1 first, where nothing listens: the client
  // must move on to 127.0.0.1.
  std::string error;
  auto client = RedisClient::connect({"localhost", server.port()}, milliseconds(2000), error);
  INFO(error);
  REQUIRE(client);
  std::optional<std::string> value;
  REQUIRE(client->get("absent", value, error));
  CHECK(!value);
}

//===----------------------------------------------------------------------===//
// Connection failures
//===----------------------------------------------------------------------===//

TEST_CASE("redis client: connecting where nothing listens fails fast", "[cache][redis]") {
  int port = freePort();
  REQUIRE(port != 0);
  std::string error;
  auto t0 = Clock::now();
  auto client = RedisClient::connect({"127.0.0.1", port}, milliseconds(5000), error);
  long long ms = msSince(t0);
  INFO(error);
  CHECK(!client);
  CHECK(error == "cannot reach redis://127.0.0.1:" + std::to_string(port) + ": Connection refused");
  CHECK(ms < 1000);
}

TEST_CASE("redis client: connecting to an unroutable address is bounded", "[cache][redis]") {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned. Depending on the
  // network the connect hangs (and times out) or fails at once.
  std::string error;
  auto t0 = Clock::now();
  auto client = RedisClient::connect({"192.0.2.1", 6379}, milliseconds(300), error);
  long long ms = msSince(t0);
  INFO(error);
  CHECK(!client);
  CHECK(contains(error, "cannot reach redis://192.0.2.1:6379: "));
  if (contains(error, "timed out"))
    CHECK(contains(error, "timed out after 300 ms"));
  CHECK(ms < 2000);
}

TEST_CASE("redis client: an unresolvable host name fails with the name", "[cache][redis]") {
  std::string error;
  auto t0 = Clock::now();
  // .invalid never resolves (RFC 2606).
  auto client = RedisClient::connect({"no-such-host.invalid", 6379}, milliseconds(1000), error);
  INFO(error);
  CHECK(!client);
  CHECK(contains(error, "cannot reach redis://no-such-host.invalid:6379: cannot resolve "
                        "'no-such-host.invalid'"));
  CHECK(msSince(t0) < 3000);
  CHECK(!RedisClient::connect({"127.0.0.1", 0}, milliseconds(100), error));
  CHECK(contains(error, "port"));
}

//===----------------------------------------------------------------------===//
// Misbehaving servers
//===----------------------------------------------------------------------===//

TEST_CASE("redis client: a server that never answers makes GET time out", "[cache][redis]") {
  FakeServer fake(FakeServer::Mode::Silent);
  REQUIRE(fake.ok());
  auto client = connectTo(fake.endpoint());
  client->setCommandTimeout(milliseconds(200));
  std::string error;
  std::optional<std::string> value;
  auto t0 = Clock::now();
  bool ok = client->get("k", value, error);
  long long ms = msSince(t0);
  INFO(error);
  CHECK(!ok);
  CHECK(contains(error, "redis://127.0.0.1:" + std::to_string(fake.port()) + ": GET: "));
  CHECK(contains(error, "timed out after 200 ms"));
  CHECK(ms >= 190);
  CHECK(ms < 2000);

  // The stream is out of step now: later calls fail at once, naming why.
  t0 = Clock::now();
  CHECK(!client->set("k", "v", error));
  CHECK(contains(error, "unusable"));
  CHECK(contains(error, "timed out"));
  CHECK(msSince(t0) < 50);
}

TEST_CASE("redis client: a server that never reads makes a large SET time out", "[cache][redis]") {
  FakeServer fake(FakeServer::Mode::Deaf);
  REQUIRE(fake.ok());
  auto client = connectTo(fake.endpoint());
  client->setCommandTimeout(milliseconds(200));
  std::string big(64u << 20, 'x'); // far more than the socket buffers hold
  std::string error;
  auto t0 = Clock::now();
  bool ok = client->set("k", big, error);
  long long ms = msSince(t0);
  INFO(error);
  CHECK(!ok);
  CHECK(contains(error, "timed out after 200 ms sending the command"));
  CHECK(ms >= 190);
  CHECK(ms < 2000);
}

namespace {
std::atomic<int> alarmCount{0};
void onAlarm(int) { ++alarmCount; }

/// Fires SIGALRM every 2 ms with a handler installed without SA_RESTART, so
/// blocking calls return EINTR; restores everything on destruction.
struct AlarmStorm {
  struct sigaction old {};
  AlarmStorm() {
    struct sigaction sa {};
    sa.sa_handler = onAlarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    ::sigaction(SIGALRM, &sa, &old);
    itimerval t{};
    t.it_interval.tv_usec = 2000;
    t.it_value.tv_usec = 2000;
    ::setitimer(ITIMER_REAL, &t, nullptr);
  }
  ~AlarmStorm() {
    itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
    ::sigaction(SIGALRM, &old, nullptr);
  }
};
} // namespace

TEST_CASE("redis client: signals (EINTR) neither cut a command short nor stretch it",
          "[cache][redis]") {
  FakeServer fake(FakeServer::Mode::Silent);
  REQUIRE(fake.ok());
  auto client = connectTo(fake.endpoint());
  client->setCommandTimeout(milliseconds(300));
  std::string error;
  std::optional<std::string> value;
  alarmCount = 0;
  bool ok;
  long long ms;
  {
    AlarmStorm storm;
    auto t0 = Clock::now();
    ok = client->get("k", value, error);
    ms = msSince(t0);
  }
  INFO(error);
  CHECK(!ok);
  CHECK(contains(error, "timed out after 300 ms"));
  CHECK(ms >= 290);
  CHECK(ms < 2000);
  CHECK(alarmCount > 10);
}

TEST_CASE("redis client: garbage replies are protocol errors", "[cache][redis]") {
  struct Case {
    std::string reply;
    const char *why;
  } cases[] = {
      {"hello\r\n", "protocol error: unexpected reply 'hello\\r\\n'"},
      {"hello", "protocol error: unexpected reply 'hello'"},
      {std::string("\0\0\0", 3), "protocol error: unexpected reply '\\x00\\x00\\x00'"},
      {"*1\r\n$1\r\na\r\n", "protocol error: unexpected reply '*1"},
      {"_\r\n", "protocol error: unexpected reply '_"},
      {"$abc\r\n", "protocol error: bad number in reply '$abc'"},
      {"$\r\n", "protocol error: bad number"},
      {"$-2\r\n", "protocol error: negative length"},
      {"$99999999999999999999999\r\n", "protocol error: bad number"},
      {"$3\r\nabcXY", "protocol error: a 3-byte value is followed by 'XY', not CRLF"},
      {"$" + std::string(100, '9'), "protocol error: reply line longer than 32 bytes"},
      {"+" + std::string(100000, 'x'), "protocol error: reply line longer than 65536 bytes"},
      {":abc\r\n", "protocol error: bad number"},
  };
  for (const Case &c : cases) {
    FakeServer fake(FakeServer::Mode::Answer, c.reply);
    REQUIRE(fake.ok());
    auto client = connectTo(fake.endpoint());
    client->setCommandTimeout(milliseconds(2000));
    std::string error;
    std::optional<std::string> value;
    auto t0 = Clock::now();
    bool ok = client->get("k", value, error);
    INFO("reply '" << c.reply.substr(0, 40) << "' gave: " << error);
    CHECK(!ok);
    CHECK(contains(error, c.why));
    CHECK(msSince(t0) < 1000); // rejected on sight, not by the timeout
    CHECK(!client->get("k", value, error));
    CHECK(contains(error, "unusable"));
  }
}

TEST_CASE("redis client: well-formed but unexpected replies are errors", "[cache][redis]") {
  struct Case {
    std::string reply;
    bool get; // GET, else SET
    const char *why;
  } cases[] = {
      {"+OK\r\n", true, "unexpected reply '+OK'"},
      {":1\r\n", true, "unexpected integer reply ':1'"},
      {"+QUEUED\r\n", false, "unexpected reply '+QUEUED'"},
      {"$-1\r\n", false, "unexpected nil reply"},
      {"$2\r\nOK\r\n", false, "unexpected bulk reply"},
      {"-ERR boom\r\n", true, "error reply: ERR boom"},
      {"-WRONGTYPE Operation against a key\r\n", false, "error reply: WRONGTYPE Operation"},
  };
  for (const Case &c : cases) {
    FakeServer fake(FakeServer::Mode::Answer, c.reply);
    REQUIRE(fake.ok());
    auto client = connectTo(fake.endpoint());
    std::string error;
    std::optional<std::string> value;
    bool ok = c.get ? client->get("k", value, error) : client->set("k", "v", error);
    INFO("reply '" << c.reply << "' gave: " << error);
    CHECK(!ok);
    CHECK(contains(error, c.why));
    // The reply was whole, so the connection is still in step and usable:
    // the next command reaches the server and gets its (same) answer.
    ok = c.get ? client->get("k", value, error) : client->set("k", "v", error);
    CHECK(!ok);
    CHECK(contains(error, c.why));
    CHECK(!contains(error, "unusable"));
  }
}

TEST_CASE("redis client: a hostile bulk length is rejected by the value bound", "[cache][redis]") {
  {
    FakeServer fake(FakeServer::Mode::Answer, "$99999999999\r\n");
    REQUIRE(fake.ok());
    auto client = connectTo(fake.endpoint());
    std::string error;
    std::optional<std::string> value;
    auto t0 = Clock::now();
    CHECK(!client->get("k", value, error));
    INFO(error);
    CHECK(contains(error, "reply value of 99999999999 bytes exceeds the limit of 1073741824 "
                          "bytes"));
    CHECK(msSince(t0) < 1000);
    CHECK(!value);
  }
  {
    // Just over a custom bound, with the bytes really there.
    FakeServer fake(FakeServer::Mode::Answer, "$1001\r\n" + std::string(1001, 'v') + "\r\n");
    REQUIRE(fake.ok());
    auto client = connectTo(fake.endpoint());
    client->setMaxValueBytes(1000);
    std::string error;
    std::optional<std::string> value;
    CHECK(!client->get("k", value, error));
    CHECK(contains(error, "reply value of 1001 bytes exceeds the limit of 1000 bytes"));
  }
  {
    // Within the bound but never delivered: the announced gigabyte is not
    // allocated up front, and the wait is still bounded.
    FakeServer fake(FakeServer::Mode::Answer, "$1073741824\r\nonly this");
    REQUIRE(fake.ok());
    auto client = connectTo(fake.endpoint());
    client->setCommandTimeout(milliseconds(200));
    std::string error;
    std::optional<std::string> value;
    auto t0 = Clock::now();
    CHECK(!client->get("k", value, error));
    CHECK(contains(error, "timed out after 200 ms"));
    CHECK(msSince(t0) < 2000);
  }
}

TEST_CASE("redis client: a server that hangs up gives an error, not SIGPIPE", "[cache][redis]") {
  // SIGPIPE's default action would kill the test process.
  auto oldPipe = ::signal(SIGPIPE, SIG_DFL);
  struct Restore {
    void (*old)(int);
    ~Restore() { ::signal(SIGPIPE, old); }
  } restore{oldPipe};
  FakeServer fake(FakeServer::Mode::HangUp);
  REQUIRE(fake.ok());
  auto client = connectTo(fake.endpoint());
  std::this_thread::sleep_for(milliseconds(100)); // let it hang up first
  std::string error;
  std::string big(16u << 20, 'x');
  CHECK(!client->set("k", big, error));
  INFO(error);
  CHECK((contains(error, "send failed") || contains(error, "receive failed") ||
         contains(error, "closed the connection")));
  CHECK(!client->set("k", big, error));
  CHECK(contains(error, "unusable"));
}

TEST_CASE("redis client: the socket is closed on destruction", "[cache][redis]") {
  FakeServer fake(FakeServer::Mode::Answer, "+OK\r\n");
  REQUIRE(fake.ok());
  {
    auto client = connectTo(fake.endpoint());
    std::string error;
    REQUIRE(client->set("k", "v", error));
    CHECK(!fake.peerClosed());
  }
  auto until = Clock::now() + std::chrono::seconds(2);
  while (!fake.peerClosed() && Clock::now() < until)
    std::this_thread::sleep_for(milliseconds(5));
  CHECK(fake.peerClosed());
}
