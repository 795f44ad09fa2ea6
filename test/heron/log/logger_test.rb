# frozen_string_literal: true

require "test_helper"
require "json"
require "heron/log/logger"

class HeronLogLoggerTest < Minitest::Test
  ENV_SAMPLE = {
    "REMOTE_ADDR" => "127.0.0.1", "REQUEST_METHOD" => "GET", "SCRIPT_NAME" => "",
    "PATH_INFO" => "/path", "QUERY_STRING" => "q", "SERVER_PROTOCOL" => "HTTP/1.1",
    "HTTP_USER_AGENT" => "curl/8.5.0", "HTTP_REFERER" => "http://a.test/from", "heron.request_id" => "req-1",
  }.freeze

  COMMON_LINE = %r{\A127\.0\.0\.1 - - \[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] "GET /path\?q HTTP/1\.1" 200 12 "http://a\.test/from" "curl/8\.5\.0" 0\.0012 level=info pid=#{Process.pid} request_id=req-1\n\z}

  def logger(**settings)
    @log = StringIO.new
    @errors = StringIO.new
    Heron::Log::Logger.new(Heron::Configuration.new(log_io: @log, error_io: @errors, **settings))
  end

  def test_common_access_line
    logger.access(ENV_SAMPLE, 200, 12, 0.00123)
    assert_match COMMON_LINE, @log.string
  end

  def test_common_access_line_without_query_bytes_or_address
    env = ENV_SAMPLE.merge("QUERY_STRING" => "", "SCRIPT_NAME" => "/app").except("REMOTE_ADDR", "HTTP_USER_AGENT", "HTTP_REFERER", "heron.request_id")
    logger.access(env, 304, nil, 1.5)
    assert_match %r{\A- - - \[.*\] "GET /app/path HTTP/1\.1" 304 - "-" "-" 1\.5000 level=info pid=\d+\n\z}, @log.string
  end

  def test_json_access_line_parses_back
    logger(log_format: :json).access(ENV_SAMPLE, 200, 12, 0.00123)
    entry = JSON.parse(@log.string)
    assert_equal({ "level" => "info", "pid" => Process.pid, "request_id" => "req-1", "remote_addr" => "127.0.0.1",
                   "method" => "GET", "path" => "/path", "query" => "q", "protocol" => "HTTP/1.1", "status" => 200,
                   "bytes" => 12, "duration_ms" => 1.23, "user_agent" => "curl/8.5.0", "referer" => "http://a.test/from" },
                 entry.except("time"))
    assert_match(/\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\z/, entry["time"])
    assert_equal 1, @log.string.count("\n")
  end

  def test_json_access_line_without_query_and_with_binary_path
    env = ENV_SAMPLE.merge("QUERY_STRING" => "", "PATH_INFO" => "/caf\xC3".b)
    logger(log_format: :json).access(env, 404, 0, 0.0)
    entry = JSON.parse(@log.string)
    assert_nil entry["query"]
    assert_equal "/caf\uFFFD", entry["path"]
  end

  def test_a_worker_index_is_in_every_line
    Heron::Log::Logger.worker = 3
    logger.access(ENV_SAMPLE, 200, 12, 0.001)
    @errors = StringIO.new
    json = Heron::Log::Logger.new(Heron::Configuration.new(log_io: @log, error_io: @errors, log_format: :json))
    json.access(ENV_SAMPLE, 200, 12, 0.001)
    json.warn("w")
    common_line, json_line = @log.string.lines
    assert_includes common_line, " worker=3 "
    assert_equal 3, JSON.parse(json_line)["worker"]
    assert_equal 3, JSON.parse(@errors.string)["worker"]
  ensure
    Heron::Log::Logger.worker = nil
  end

  def test_header_values_cannot_break_a_common_line
    logger.access(ENV_SAMPLE.merge("HTTP_USER_AGENT" => %(x" 200 0 "evil\\\t\x01)), 200, 1, 0.1)
    assert_includes @log.string, %("x\\" 200 0 \\"evil\\\\\\x09\\x01")
    assert_equal 1, @log.string.count("\n")
    logger.access(ENV_SAMPLE.merge("HTTP_REFERER" => "\xFF\"".dup.force_encoding(Encoding::UTF_8)), 200, 1, 0.1)
    assert_includes @log.string.b, %("\xFF\\"").b, "bytes that are not UTF-8 are written as they came, quote escaped"
  end

  def test_log_requests_false_skips_access_lines_only
    log = logger(log_requests: false)
    log.access(ENV_SAMPLE, 200, 12, 0.001)
    log.warn("still here")
    assert_empty @log.string
    assert_includes @errors.string, "still here"
  end

  def test_a_logger_object_gets_every_line_at_its_level
    require "logger"
    out = StringIO.new
    foreign = ::Logger.new(out)
    foreign.formatter = ->(severity, _time, _progname, message) { "#{severity}|#{message}\n" }
    log = Heron::Log::Logger.new(Heron::Configuration.new(logger: foreign, log_io: StringIO.new, error_io: StringIO.new))
    log.access(ENV_SAMPLE, 200, 12, 0.001)
    log.warn("careful")
    log.error("failed", RuntimeError.new("boom"))
    lines = out.string.lines
    assert_match %r{\AINFO\|127\.0\.0\.1 - - .*"GET /path\?q HTTP/1\.1" 200 12 }, lines[0]
    assert_match(/\AWARN\|.* WARN careful\n\z/, lines[1])
    assert_match(/\AERROR\|.* ERROR failed: RuntimeError: boom\n\z/, lines[2])
  end

  def test_a_raising_logger_object_never_fails_a_request
    raising = Object.new
    %i[info warn error].each { |level| raising.define_singleton_method(level) { |*| raise "disk full" } }
    log = Heron::Log::Logger.new(Heron::Configuration.new(logger: raising))
    log.access(ENV_SAMPLE, 200, 1, 0.1)
    log.error("x")
  end

  def test_rejected_requests_are_rate_limited_and_counted
    log = logger(log_format: :json)
    25.times { |i| log.rejected(400, "invalid header field #{i}", "203.0.113.9") }
    entries = @errors.string.lines.map { |line| JSON.parse(line) }
    assert_equal Heron::Log::Logger::REJECTIONS_PER_SECOND, entries.size
    assert_equal ["warn", 400, "invalid header field 0", "203.0.113.9", 0],
                 entries.first.values_at("level", "status", "reason", "remote_addr", "not_logged")
  end

  def test_structured_details_go_into_json_events_only
    logger(log_format: :json).warn("N+1", count: 3, query: "SELECT ?", level: "forged", message: "forged")
    entry = JSON.parse(@errors.string)
    assert_equal ["warn", "N+1", 3, "SELECT ?"], entry.values_at("level", "message", "count", "query")
    logger.warn("N+1", count: 3)
    assert_match(/WARN N\+1\n\z/, @errors.string)
  end

  def test_quiet_skips_access_lines_only
    quiet = logger(quiet: true)
    quiet.access(ENV_SAMPLE, 200, 12, 0.001)
    quiet.info("still here")
    assert_empty @log.string
    assert_includes @errors.string, "still here"
  end

  def test_info_and_warn_go_to_error_io_with_time_and_pid
    log = logger
    log.info("started")
    log.warn("slow")
    lines = @errors.string.lines
    assert_match(/\A\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4} \[#{Process.pid}\] INFO started\n\z/o, lines[0])
    assert_match(/\[#{Process.pid}\] WARN slow\n\z/o, lines[1])
    assert_empty @log.string
  end

  def test_error_includes_class_message_backtrace_and_cause
    logger.error("app failed", nested_error)
    text = @errors.string
    assert_match(/ERROR app failed: ArgumentError: outer\n    .*logger_test\.rb:\d+/, text)
    assert_match(/\nCaused by: RuntimeError: inner\n    /, text)
    assert text.end_with?("\n")
  end

  def test_error_without_exception_or_backtrace
    log = logger
    log.error("plain")
    log.error("unraised", RuntimeError.new("never raised"))
    assert_match(/ERROR plain\n.*ERROR unraised: RuntimeError: never raised\n\z/, @errors.string)
  end

  def test_json_error_parses_back
    logger(log_format: :json).error("app failed", nested_error)
    entry = JSON.parse(@errors.string)
    assert_equal ["error", "app failed", "ArgumentError", "outer", "RuntimeError"],
                 [entry["level"], entry["message"], entry["error"]["class"], entry["error"]["message"],
                  entry["error"]["cause"]["class"]]
    assert_equal Process.pid, entry["pid"]
    refute_empty entry["error"]["backtrace"]
  end

  def test_json_info_has_no_error
    logger(log_format: :json).warn("slow")
    entry = JSON.parse(@errors.string)
    assert_equal %w[warn slow], [entry["level"], entry["message"]]
    refute entry.key?("error")
  end

  def test_banner_lists_version_mode_and_urls_even_when_quiet
    logger(quiet: true, environment: "production").banner(
      addresses: ["tcp://0.0.0.0:9292", "unix:///tmp/h.sock", Addrinfo.tcp("127.0.0.1", 80),
                  Addrinfo.tcp("::1", 81), Addrinfo.unix("/tmp/a.sock")],
      mode: "single process, 1 reactor thread, up to 4096 connections",
    )
    text = @log.string
    assert_includes text, "Heron #{Heron::VERSION} (ruby #{RUBY_VERSION}"
    assert_includes text, "production environment, pid #{Process.pid}"
    assert_includes text, "* Mode: single process, 1 reactor thread, up to 4096 connections"
    %w[http://0.0.0.0:9292 unix:///tmp/h.sock http://127.0.0.1:80 http://[::1]:81 unix:///tmp/a.sock].each do |url|
      assert_includes text, "* Listening on #{url}\n"
    end
    assert text.end_with?("Use Ctrl-C to stop\n")
  end

  def test_json_banner_is_one_object
    logger(log_format: :json).banner(addresses: ["tcp://127.0.0.1:1"], mode: "cluster")
    entry = JSON.parse(@log.string)
    assert_equal ["Heron started", Heron::VERSION, "cluster", ["http://127.0.0.1:1"]],
                 entry.values_at("message", "version", "mode", "urls")
  end

  # Where the control listener went (a taken address moves it to a free port) is in the banner.
  def test_the_banner_names_the_control_listener
    logger.banner(addresses: ["tcp://127.0.0.1:1"], mode: "m", control: "tcp://127.0.0.1:41234")
    assert_includes @log.string, "* Listening on http://127.0.0.1:1\n* Control on tcp://127.0.0.1:41234\nUse Ctrl-C"
    logger(log_format: :json).banner(addresses: ["tcp://127.0.0.1:1"], mode: "m", control: "unix:///run/c.sock")
    assert_equal "unix:///run/c.sock", JSON.parse(@log.string)["control"]
  end

  def test_a_broken_log_io_does_not_raise
    broken = Object.new
    def broken.write(_text) = raise(Errno::EPIPE)
    log = Heron::Log::Logger.new(Heron::Configuration.new(log_io: broken, error_io: broken))
    log.access(ENV_SAMPLE, 200, 1, 0.1)
    log.error("x")
  end

  def test_each_entry_is_one_write
    io = Class.new(StringIO) { attr_accessor :writes; def write(text) = (self.writes = writes.to_i + 1) && super }.new
    log = Heron::Log::Logger.new(Heron::Configuration.new(log_io: io, error_io: io))
    log.access(ENV_SAMPLE, 200, 1, 0.1)
    log.error("x", nested_error)
    log.banner(addresses: ["tcp://a:1", "tcp://b:2"], mode: "m")
    assert_equal 3, io.writes
  end

  def test_lines_from_many_threads_do_not_interleave
    reader, writer = IO.pipe
    log = Heron::Log::Logger.new(Heron::Configuration.new(log_io: writer, error_io: writer))
    threads = 4.times.map { Thread.new { 200.times { log.access(ENV_SAMPLE, 200, 12, 0.00123) } } }
    collector = Thread.new { reader.read }
    threads.each(&:join)
    writer.close
    lines = collector.value.lines
    assert_equal 800, lines.size
    lines.each { |line| assert_match COMMON_LINE, line }
  end

  def test_log_io_is_made_unbuffered
    reader, writer = IO.pipe
    writer.sync = false
    Heron::Log::Logger.new(Heron::Configuration.new(log_io: writer))
    assert writer.sync
  ensure
    [reader, writer].each(&:close)
  end

  private

  def nested_error
    begin
      raise "inner"
    rescue RuntimeError
      raise ArgumentError, "outer"
    end
  rescue ArgumentError => e
    e
  end
end
