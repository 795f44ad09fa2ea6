# frozen_string_literal: true

require "test_helper"

class HeronConfigTypesTest < Minitest::Test
  Types = Heron::Config::Types

  def assert_rejects(type, value, message, *arguments)
    error = assert_raises(Heron::ConfigError) { Types.public_send(type, value, "--x", *arguments) }
    assert_equal message, error.message
  end

  def test_integers_accept_integers_and_integer_strings
    assert_equal 4, Types.non_negative_integer("4", "x")
    assert_equal 0, Types.non_negative_integer(0, "x")
    assert_equal 7, Types.positive_integer(" 7 ", "x")
  end

  def test_integers_reject_other_values
    assert_rejects :non_negative_integer, "x", '--x must be a non-negative integer (got "x")'
    assert_rejects :non_negative_integer, -1, "--x must be a non-negative integer (got -1)"
    assert_rejects :positive_integer, 0, "--x must be a positive integer (got 0)"
    assert_rejects :positive_integer, 2.5, "--x must be a positive integer (got 2.5)"
    assert_rejects :positive_integer, nil, "--x must be a positive integer (got nil)"
  end

  def test_port_range
    assert_equal 0, Types.port("0", "x")
    assert_equal 65_535, Types.port(65_535, "x")
    assert_rejects :port, "65536", '--x must be a port number (0-65535) (got "65536")'
    assert_rejects :port, "http", '--x must be a port number (0-65535) (got "http")'
  end

  def test_optional_count
    assert_nil Types.optional_count(nil, "x")
    assert_nil Types.optional_count(false, "x")
    assert_equal 0, Types.optional_count("0", "x")
    assert_equal 1000, Types.optional_count(1000, "x")
    assert_rejects :optional_count, "-1", '--x must be a non-negative integer or nil (got "-1")'
  end

  def test_optional_size
    assert_nil Types.optional_size(nil, "x")
    assert_nil Types.optional_size("unlimited", "x")
    assert_equal 1024, Types.optional_size("1024", "x")
    assert_rejects :optional_size, "0", '--x must be a positive integer or unlimited (got "0")'
  end

  def test_duration
    assert_equal 2.5, Types.duration("2.5", "x")
    assert_equal 3.0, Types.duration(3, "x")
    assert_equal 0.5, Types.duration(".5", "x")
    assert_equal 0.0, Types.duration(0, "x")
    assert_rejects :duration, "-1", '--x must be a non-negative number of seconds (got "-1")'
    assert_rejects :duration, "soon", '--x must be a non-negative number of seconds (got "soon")'
    assert_rejects :duration, Float::INFINITY, "--x must be a non-negative number of seconds (got Infinity)"
    assert_rejects :duration, nil, "--x must be a non-negative number of seconds (got nil)"
  end

  def test_positive_duration
    assert_equal 60.0, Types.positive_duration("60", "worker_timeout")
    assert_equal 0.5, Types.positive_duration(0.5, "worker_timeout")
    [0, "0", -1, "soon", Float::INFINITY, nil].each do |bad|
      error = assert_raises(Heron::ConfigError) { Types.positive_duration(bad, "worker_timeout") }
      assert_match(/worker_timeout must be a positive number of seconds/, error.message)
    end
  end

  def test_lifecycle_settings_from_the_command_line_and_the_dsl
    require "heron/config/cli"
    config = Dir.mktmpdir do |dir|
      File.write(File.join(dir, "app.ru"), "run ->(env) { [200, {}, []] }")
      Heron::Config::CLI.new(%W[--worker-timeout 5 --worker-boot-timeout 9 --worker-max-memory 1000
                                --pidfile p.pid --log-file h.log #{dir}/app.ru]).parse
    end
    assert_equal [5.0, 9.0, 1000, "p.pid", "h.log"],
                 config.to_h.values_at(:worker_timeout, :worker_boot_timeout, :worker_max_memory, :pidfile, :log_file)
    defaults = Heron::Configuration.new
    assert_equal [60.0, 60.0, nil, nil, nil],
                 defaults.to_h.values_at(:worker_timeout, :worker_boot_timeout, :worker_max_memory, :pidfile, :log_file)
    dsl = Heron::Configuration.new
    Heron::Config::DSL.new(dsl).evaluate("worker_timeout 30\nworker_max_memory 512 * 1024 * 1024\npidfile 'x.pid'")
    assert_equal [30.0, 512 * 1024 * 1024, "x.pid"], dsl.to_h.values_at(:worker_timeout, :worker_max_memory, :pidfile)
    error = assert_raises(Heron::ConfigError) { Heron::Config::DSL.new(dsl).evaluate("worker_timeout 0") }
    assert_match(/worker_timeout must be a positive number of seconds/, error.message)
  end

  def test_strings_from_a_list_or_comma_separated_and_bounded
    assert_equal ["users", "app/a.rb:3"], Types.strings(" users, ,app/a.rb:3 ", "x")
    assert_equal ["posts"], Types.strings([:posts, ""], "x")
    assert_equal [], Types.strings(nil, "x")
    assert_rejects :strings, ["a" * 257], "--x must be entries of at most 256 bytes (got \"#{'a' * 257}\")"
    assert_rejects :strings, Array.new(1001, "t"), '--x must be at most 1000 entries (got "1001 entries")'
  end

  def test_boolean
    assert_equal true, Types.boolean(true, "x")
    assert_equal false, Types.boolean(false, "x")
    assert_equal true, Types.boolean("Yes", "x")
    assert_equal false, Types.boolean("off", "x")
    assert_rejects :boolean, "maybe", '--x must be true or false (got "maybe")'
  end

  def test_optional_boolean
    assert_nil Types.optional_boolean(nil, "x")
    assert_nil Types.optional_boolean("auto", "x")
    assert_equal true, Types.optional_boolean("true", "x")
  end

  def test_choice
    assert_equal :json, Types.choice("json", "x", %i[common json])
    assert_equal :common, Types.choice(:common, "x", %i[common json])
    assert_rejects :choice, "xml", '--x must be one of common, json (got "xml")', %i[common json]
    assert_rejects :choice, 1, "--x must be one of common, json (got 1)", %i[common json]
  end

  def test_strings
    assert_equal "production", Types.string(:production, "x")
    assert_nil Types.optional_string(nil, "x")
    assert_equal "t", Types.optional_string("t", "x")
    assert_rejects :string, "", '--x must be a non-empty string (got "")'
    assert_rejects :string, 3, "--x must be a non-empty string (got 3)"
  end

  def test_url_path
    assert_equal "/__heron", Types.url_path("/__heron", "x")
    assert_rejects :url_path, "heron", '--x must be a path starting with / (got "heron")'
    assert_rejects :url_path, :"/x", "--x must be a path starting with / (got :\"/x\")"
  end

  def test_bind
    ["tcp://0.0.0.0:9292", "tcp://[::1]:0", "tcp://localhost:80", "unix:///tmp/h.sock", "ssl://localhost:9443",
     "ssl://[::1]:443?cert=a.pem&key=b.pem"].each do |uri|
      assert_equal uri, Types.bind(uri, "x")
    end
    message = "--x must be a bind URI like tcp://HOST:PORT, ssl://HOST:PORT?cert=PATH&key=PATH or unix:///PATH (got %p)"
    ["http://x:1", "tcp://host", "tcp://h:99999", "unix://", "tcp://a b:1", "ssl://h:99999", "ssl://h?cert=x"].each do |uri|
      assert_rejects :bind, uri, format(message, uri)
    end
    assert_rejects :bind, 9292, format(message, 9292)
  end

  def test_optional_bind_and_binds
    assert_nil Types.optional_bind(nil, "x")
    assert_equal ["tcp://a:1"], Types.binds("tcp://a:1", "x")
    assert_equal ["tcp://a:1", "unix:///s"], Types.binds(["tcp://a:1", "unix:///s"], "x")
  end

  def test_writer_and_callables
    io = StringIO.new
    assert_same io, Types.writer(io, "x")
    assert_rejects :writer, "log.txt", '--x must be an IO (something with #write) (got "log.txt")'
    app = ->(_env) {}
    assert_same app, Types.optional_callable(app, "x")
    assert_nil Types.optional_callable(nil, "x")
    assert_rejects :optional_callable, "app", '--x must be a Rack app (#call) (got "app")'
    assert_equal [app], Types.callables([app], "x")
    assert_rejects :callables, [1], "--x must be a list of blocks (got [1])"
  end
end
