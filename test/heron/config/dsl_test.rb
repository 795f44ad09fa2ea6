# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/config/dsl"

class HeronConfigDSLTest < Minitest::Test
  def evaluate(source, config = Heron::Configuration.new)
    Heron::Config::DSL.new(config, "heron.rb").evaluate(source)
    config
  end

  def assert_config_error(source, message)
    error = assert_raises(Heron::ConfigError) { evaluate(source) }
    assert_equal message, error.message
  end

  # [directive source, setting, expected value]
  DIRECTIVES = [
    ['port "3000"', :port, 3000],
    ['host "127.0.0.1"', :host, "127.0.0.1"],
    ["workers 4", :workers, 4],
    ['threads "2"', :threads, 2],
    ["preload", :preload, true],
    ["preload false", :preload, false],
    ["preload_app!", :preload, true],
    ["environment :production", :environment, "production"],
    ['rackup "app.ru"', :rackup, "app.ru"],
    ["max_connections 100", :max_connections, 100],
    ["log_format :json", :log_format, :json],
    ["quiet", :quiet, true],
    ["shutdown_timeout 5", :shutdown_timeout, 5.0],
    ["first_byte_timeout 1.5", :first_byte_timeout, 1.5],
    ["header_timeout 2", :header_timeout, 2.0],
    ["keepalive_timeout 0", :keepalive_timeout, 0.0],
    ["body_timeout 3", :body_timeout, 3.0],
    ["write_timeout 4", :write_timeout, 4.0],
    ["max_body_size 1_000", :max_body_size, 1000],
    ["max_body_size nil", :max_body_size, nil],
    ["max_target_bytes 100", :max_target_bytes, 100],
    ["max_header_bytes 2048", :max_header_bytes, 2048],
    ["max_header_fields 10", :max_header_fields, 10],
    ["max_chunk_extension_bytes 256", :max_chunk_extension_bytes, 256],
    ["max_total_chunk_extension_bytes 2048", :max_total_chunk_extension_bytes, 2048],
    ["rewindable_input", :rewindable_input, true],
    ["body_spool_threshold 0", :body_spool_threshold, 0],
    ["forwarded_proto", :forwarded_proto, true],
    ["continue :eager", :continue_mode, :eager],
    ["after_reply_concurrency 8", :after_reply_concurrency, 8],
    ["profile", :profile, true],
    ["profile false", :profile, false],
    ["metrics false", :metrics, false],
    ['metrics_bind "tcp://0.0.0.0:9400"', :metrics_bind, "tcp://0.0.0.0:9400"],
    ["metrics_bind nil", :metrics_bind, nil],
  ].freeze

  def test_each_directive_sets_its_setting
    DIRECTIVES.each do |source, key, expected|
      actual = evaluate(source).public_send(key)
      expected.nil? ? assert_nil(actual, source) : assert_equal(expected, actual, source)
    end
  end

  # [directive source, error message]
  INVALID = [
    ['port "http"', 'heron.rb:1: port must be a port number (0-65535) (got "http")'],
    ["host 1", "heron.rb:1: host must be a non-empty string (got 1)"],
    ["workers(-1)", "heron.rb:1: workers must be a non-negative integer (got -1)"],
    ["threads 0", "heron.rb:1: threads must be a positive integer (got 0)"],
    ['preload "sometimes"', 'heron.rb:1: preload must be true or false (got "sometimes")'],
    ['preload_app! "x"', 'heron.rb:1: preload_app! must be true or false (got "x")'],
    ['environment ""', 'heron.rb:1: environment must be a non-empty string (got "")'],
    ["rackup nil", "heron.rb:1: rackup must be a non-empty string (got nil)"],
    ['app "hello"', 'heron.rb:1: app must be a Rack app (#call) (got "hello")'],
    ["app", "heron.rb:1: app needs a Rack app or a block"],
    ["max_connections 0", "heron.rb:1: max_connections must be a positive integer (got 0)"],
    ["log_format :xml", "heron.rb:1: log_format must be one of common, json (got :xml)"],
    ['quiet "loud"', 'heron.rb:1: quiet must be true or false (got "loud")'],
    ["shutdown_timeout(-1)", "heron.rb:1: shutdown_timeout must be a non-negative number of seconds (got -1)"],
    ["first_byte_timeout :x", "heron.rb:1: first_byte_timeout must be a non-negative number of seconds (got :x)"],
    ["header_timeout nil", "heron.rb:1: header_timeout must be a non-negative number of seconds (got nil)"],
    ['keepalive_timeout "x"', 'heron.rb:1: keepalive_timeout must be a non-negative number of seconds (got "x")'],
    ["body_timeout(-2)", "heron.rb:1: body_timeout must be a non-negative number of seconds (got -2)"],
    ["write_timeout []", "heron.rb:1: write_timeout must be a non-negative number of seconds (got [])"],
    ["max_body_size 0", "heron.rb:1: max_body_size must be a positive integer or unlimited (got 0)"],
    ["max_target_bytes 0", "heron.rb:1: max_target_bytes must be a positive integer (got 0)"],
    ["max_header_bytes 1.5", "heron.rb:1: max_header_bytes must be a positive integer (got 1.5)"],
    ["max_header_fields 0", "heron.rb:1: max_header_fields must be a positive integer (got 0)"],
    ["max_total_chunk_extension_bytes 0",
     "heron.rb:1: max_total_chunk_extension_bytes must be a positive integer (got 0)"],
    ['forwarded_proto "x"', 'heron.rb:1: forwarded_proto must be true or false (got "x")'],
    ["continue :later", "heron.rb:1: continue must be one of lazy, eager (got :later)"],
    ["after_reply_concurrency 0", "heron.rb:1: after_reply_concurrency must be a positive integer (got 0)"],
    ['profile "x"', 'heron.rb:1: profile must be true or false (got "x")'],
    ['metrics "x"', 'heron.rb:1: metrics must be true or false (got "x")'],
    ['metrics_bind "9393"', 'heron.rb:1: metrics_bind must be a bind URI like tcp://HOST:PORT, ssl://HOST:PORT?cert=PATH&key=PATH or unix:///PATH (got "9393")'],
    ['bind "http://x:1"', 'heron.rb:1: bind must be a bind URI like tcp://HOST:PORT, ssl://HOST:PORT?cert=PATH&key=PATH or unix:///PATH (got "http://x:1")'],
    ["before_fork", "heron.rb:1: before_fork needs a block"],
    ["on_worker_boot", "heron.rb:1: on_worker_boot needs a block"],
  ].freeze

  def test_each_directive_rejects_bad_values_naming_file_and_line
    INVALID.each do |source, message|
      assert_config_error(source, message)
    end
  end

  def test_bind_is_repeatable
    config = evaluate(%(bind "tcp://127.0.0.1:1"\nbind "unix:///tmp/h.sock"))
    assert_equal ["tcp://127.0.0.1:1", "unix:///tmp/h.sock"], config.bind_uris
  end

  def test_ssl_bind_writes_an_ssl_uri_the_puma_way
    config = evaluate(%(ssl_bind "::1", 9443, { cert: ["a.crt", "b.crt"], key: ["a.key", "b.key"], verify_mode: "peer", ca: "ca.pem" }))
    assert_equal ["ssl://[::1]:9443?cert=a.crt&cert=b.crt&key=a.key&key=b.key&ca=ca.pem&verify=peer"], config.bind_uris
    assert_equal ["ssl://localhost:9443"], evaluate(%(ssl_bind "localhost", 9443)).bind_uris
  end

  def test_hooks_are_kept_in_order
    config = evaluate("before_fork { :a }\nbefore_fork { :b }\non_worker_boot { |index| index * 2 }")
    assert_equal %i[a b], config.before_fork.map(&:call)
    assert_equal 6, config.on_worker_boot.first.call(3)
  end

  def test_app_takes_an_object_or_a_block
    app = ->(_env) { [204, {}, []] }
    config = Heron::Configuration.new
    Heron::Config::DSL.new(config).app(app)
    assert_same app, config.app
    config = evaluate('app { |env| [200, {}, [env["PATH_INFO"]]] }')
    assert_equal [200, {}, ["/x"]], config.app.call("PATH_INFO" => "/x")
  end

  def test_environment_without_argument_reads_the_current_one
    config = Heron::Configuration.new(environment: "production")
    evaluate('workers(environment == "production" ? 4 : 1)', config)
    assert_equal 4, config.workers
  end

  def test_errors_name_the_line
    assert_config_error("workers 2\n\nthreads 0", "heron.rb:3: threads must be a positive integer (got 0)")
  end

  def test_unknown_directive_suggests_a_spelling
    assert_config_error("wokers 2", "heron.rb:1: unknown directive wokers (did you mean workers?)")
    assert_config_error("frobnicate", "heron.rb:1: unknown directive frobnicate")
  end

  def test_other_exceptions_are_reported_on_one_line
    assert_config_error("workers 1\nraise 'no database'", "heron.rb:2: no database (RuntimeError)")
    assert_config_error("1.frob", "heron.rb:1: undefined method `frob' for 1:Integer (NoMethodError)")
    assert_config_error('require "heron/no_such_file"',
                        "heron.rb:1: cannot load such file -- heron/no_such_file (LoadError)")
  end

  def test_syntax_error_is_one_line
    error = assert_raises(Heron::ConfigError) { evaluate("workers 2\nif true\n") }
    assert_match(/\Aheron\.rb:\d: syntax error/, error.message)
    refute_includes error.message, "\n"
  end

  def test_load_reads_a_file
    Dir.mktmpdir do |dir|
      path = File.join(dir, "heron.rb")
      File.write(path, "workers 3\nport 8080\n")
      config = Heron::Config::DSL.load(Heron::Configuration.new, path)
      assert_equal [3, 8080], [config.workers, config.port]
    end
  end

  def test_load_reports_an_unreadable_file
    error = assert_raises(Heron::ConfigError) { Heron::Config::DSL.load(Heron::Configuration.new, "/nonexistent/h.rb") }
    assert_equal "cannot read config file /nonexistent/h.rb: No such file or directory", error.message
  end

  def test_inspect_is_short
    assert_equal "the config file", Heron::Config::DSL.new(Heron::Configuration.new).inspect
  end

  ROOT = File.expand_path("../../..", __dir__)

  def test_the_example_config_file_loads
    config = Heron::Config::DSL.load(Heron::Configuration.new(environment: "production"),
                                     File.join(ROOT, "examples/config/heron.rb"))
    assert_equal [2, true, :json], [config.workers, config.preload, config.log_format]
  end

  def test_the_sample_in_the_docs_loads
    docs = File.read(File.join(ROOT, "docs/configuration.md"))
    sample = docs[/## A sample config\/heron.rb\n\n```ruby\n(.*?)```/m, 1]
    config = evaluate(sample, Heron::Configuration.new(environment: "production"))
    assert_equal [4, 8192], [config.workers, config.max_connections]
  end

  def test_the_docs_describe_every_directive
    docs = File.read(File.join(ROOT, "docs/configuration.md"))
    Heron::Config::DSL.public_instance_methods(false).each do |name|
      next if %i[evaluate inspect].include?(name)
      assert_includes docs, "`#{name}", "docs/configuration.md does not describe #{name}"
    end
  end
end
