# frozen_string_literal: true

require "test_helper"
require "open3"
require "socket"
require "tmpdir"
require "json"
require "heron/config/dsl"
require "logger"

# A `config/puma.rb` copied to `config/heron.rb`: Rails 7.1's generated one, with the Puma
# directives people add to it, boots a real `heron` whose behaviour follows their mappings
# (persistent_timeout closes idle connections, early_hints sends a 103, lowlevel_error_handler
# gets the error and answers, pidfile is written); a directive with no Heron counterpart stops
# it with exit status 2 and a line naming what to use; and every Puma directive is known by
# name, none a NoMethodError.
class HeronConfigPumaDirectivesTest < Minitest::Test
  DOCS = File.expand_path("../../../docs/configuration.md", __dir__)

  # Rails 7.1's `config/puma.rb`, as `rails new` writes it, then lines Puma users add.
  def puma_rb(dir)
    <<~RUBY
      max_threads_count = ENV.fetch("RAILS_MAX_THREADS") { 5 }
      min_threads_count = ENV.fetch("RAILS_MIN_THREADS") { max_threads_count }
      threads min_threads_count, max_threads_count
      if ENV["RAILS_ENV"] == "production"
        worker_count = Integer(ENV.fetch("WEB_CONCURRENCY") { 1 })
        workers worker_count if worker_count > 1
      end
      worker_timeout 3600 if ENV.fetch("RAILS_ENV", "development") == "development"
      port ENV.fetch("PORT") { 3000 }
      environment ENV.fetch("RAILS_ENV") { "development" }
      pidfile #{File.join(dir, 'server.pid').inspect}
      state_path #{File.join(dir, 'puma.state').inspect}
      plugin :tmp_restart
      persistent_timeout 1
      first_data_timeout 30
      worker_shutdown_timeout 10
      fork_worker
      early_hints true
      lowlevel_error_handler do |error, env, status|
        File.write(#{File.join(dir, 'reported').inspect}, [error.class, env["PATH_INFO"], status].join(" "))
        [status, { "content-type" => "text/plain" }, ["reported to the error tracker\\n"]]
      end
    RUBY
  end

  APP = <<~RUBY
    run lambda { |env|
      raise "kaboom" if env["PATH_INFO"] == "/boom"
      env["rack.early_hints"]&.call("link" => "</app.css>; rel=preload; as=style")
      [200, { "content-type" => "text/plain" }, ["ok\\n"]]
    }
  RUBY

  def test_rails_generated_puma_rb_runs_with_its_directives_mapped
    Dir.mktmpdir do |dir|
      File.write(config = File.join(dir, "heron.rb"), puma_rb(dir))
      pid, port, log = spawn_heron(APP, "-C", config)
      output = File.read(log)
      assert_match(/heron.rb:3: note: threads 5, 5 is Puma's thread pool: Heron serves every connection in a fiber/, output)
      assert_match(/heron.rb:13: note: plugin :tmp_restart is Puma's: Heron does this itself/, output)
      refute_match(/fork_worker/, output) # Heron reforks too: it sets refork_after, silently
      pidfile = File.join(dir, "server.pid")
      state = File.join(dir, "puma.state")
      # Each written after the banner, the state file by the control listener apart from the
      # pidfile: a loaded machine shows the gaps (two suites side by side once read the state
      # file before it was there).
      eventually { File.exist?(pidfile) && File.exist?(state) }
      assert_equal pid.to_s, File.read(pidfile).strip
      assert_equal pid, JSON.parse(File.read(state))["pid"], "state_path is where heron ctl finds it"

      hints, = Open3.capture2e("curl", "-sS", "-v", "--max-time", "30", "http://127.0.0.1:#{port}/")
      assert_match(%r{< HTTP/1.1 103 Early Hints\r?\n< link: </app.css>; rel=preload; as=style}, hints)

      boom, = Open3.capture2e("curl", "-sS", "-i", "--max-time", "30", "http://127.0.0.1:#{port}/boom")
      assert_match(%r{\AHTTP/1.1 500 }, boom)
      assert_includes boom, "reported to the error tracker"
      assert_equal "RuntimeError /boom 500", File.read(File.join(dir, "reported"))

      assert_idle_connection_closed_before(port, 10) # persistent_timeout 1 (Heron's default would keep it 20 s)
    ensure
      stop_heron(pid)
    end
  end

  def test_a_directive_heron_has_no_counterpart_for_exits_2_naming_what_to_use
    Dir.mktmpdir do |dir|
      File.write(config = File.join(dir, "heron.rb"), "workers 0\nset_default_host \"example.com\"\n")
      File.write(File.join(dir, "config.ru"), APP)
      output, status = Open3.capture2e(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "-C", config, chdir: dir)
      assert_equal 2, status.exitstatus, output
      assert_equal "heron: #{config}:2: set_default_host is Puma's: use `host NAME`\n",
                   output
    end
  end

  def test_every_puma_directive_is_known_by_name
    samples = { port: [3000, "127.0.0.1"], threads: [5, 5], plugin: [:tmp_restart], force_shutdown_after: [10], before_worker_boot: [],
                stdout_redirect: ["log/heron.log"], state_path: ["tmp/pids/puma.state"], custom_logger: [Logger.new(nil)], activate_control_app: ["tcp://127.0.0.1:9494", { auth_token: "t" }] }
    Heron::Config::PumaDirectives::TABLE.each do |name, entry|
      config = Heron::Configuration.new(error_io: StringIO.new)
      dsl = Heron::Config::DSL.new(config, "heron.rb")
      args = samples.fetch(name) { entry[:kind] == :maps ? [5] : [] }
      begin
        dsl.public_send(name, *args) {}
        refute_equal :refused, entry[:kind], "#{name} should be refused"
        assert_match(/note: #{name}.* is Puma's|note: threads 5, 5/, config.error_io.string, name) if entry[:kind] == :ignored || name == :threads
      rescue Heron::ConfigError => e
        assert_equal :refused, entry[:kind], "#{name}: #{e.message}"
        assert_equal Heron::Config::PumaDirectives.message(name), e.message
      end
    end
  end

  def test_mapped_directives_set_heron_settings
    config = Heron::Configuration.new(error_io: StringIO.new)
    Heron::Config::DSL.new(config, "heron.rb").evaluate(<<~RUBY)
      persistent_timeout 7
      first_data_timeout 8
      worker_shutdown_timeout 9
      http_content_length_limit 1024
      port 4000, "::1"
      stdout_redirect "log/heron.log", "log/heron.log", true
      activate_control_app "unix:///tmp/ctl.sock", { auth_token: "secret" }
      before_worker_boot { }
    RUBY
    assert_equal [7.0, 8.0, 9.0, 1024, 4000, "::1", "log/heron.log", "unix:///tmp/ctl.sock", "secret", 1],
                 [config.keepalive_timeout, config.first_byte_timeout, config.shutdown_timeout, config.max_body_size,
                  config.port, config.host, config.log_file, config.control_bind, config.control_token, config.on_worker_boot.size]
  end

  def test_a_port_beside_binds_is_noted_as_unused
    config = Heron::Configuration.new(error_io: StringIO.new)
    Heron::Config::DSL.new(config, "heron.rb").evaluate(%(port 3000\nbind "unix:///tmp/heron-test.sock"\n))
    assert_equal ["unix:///tmp/heron-test.sock"], config.bind_uris
    assert_includes config.error_io.string, "heron: heron.rb: note: port 3000 is not used: Heron listens on the binds alone " \
                                            "when any is given (Puma on both); add bind \"tcp://0.0.0.0:3000\""
  end

  def test_the_docs_table_is_current
    docs = File.read(DOCS)
    assert_equal Heron::Config::PumaDirectives.update_docs(docs), docs, "docs/configuration.md is out of date: run `bundle exec rake docs:settings`"
    assert_includes docs, Heron::Config::PumaDirectives::DOC_BEGIN
  end

  private

  # A keep-alive connection left idle after one request is closed by the server within `bound` s.
  def assert_idle_connection_closed_before(port, bound)
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("GET / HTTP/1.1\r\nhost: x\r\n\r\n")
    response = +""
    response << socket.readpartial(4096) until response.include?("\r\n\r\nok\n")
    assert socket.wait_readable(bound), "the idle connection was still open after #{bound} s"
    assert_raises(EOFError) { socket.readpartial(1) }
  ensure
    socket&.close
  end
end
