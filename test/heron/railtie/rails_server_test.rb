# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "json"
require "open3"
require_relative "../../support/curl_helper"
require_relative "../../support/install_helper"

# A real Rails 7.1 app under `bin/rails server -u heron --early-hints` in development, with no
# `-b` (so Rails asks for `localhost`) and a config/heron.rb holding `log_format :json`:
# - it answers on 127.0.0.1 and on ::1 (`curl -4` and `curl -6 http://localhost:PORT`), as Puma;
# - Rails' `send_early_hints` and `preload_link_tag` reach curl as a `103 Early Hints` over
#   HTTP/1.1 and HTTP/2, and never reach an HTTP/1.0 client;
# - Rails' own log lines ("Started GET", "Completed 200 OK") come out as JSON objects carrying the
#   request's id, the same id as Heron's JSON access line and the response's x-request-id.
class HeronRailtieRailsServerTest < Minitest::Test
  include InstallHelper
  include CurlHelper

  APP = {
    "config/application.rb" => <<~'RUBY',
      require "rails"
      require "action_controller/railtie"
      require "heron" # what Bundler.require does for `gem "heron"`
      class HeronRailsServerCheck < Rails::Application
        config.load_defaults 7.1
        config.root = File.expand_path("..", __dir__)
        config.eager_load = false
        config.secret_key_base = "x" * 64
        config.hosts.clear
        routes.append { get "/hints" => "pages#hints" }
      end
    RUBY
    "config/environment.rb" => %(require_relative "application"\nRails.application.initialize!\n),
    "config.ru" => %(require_relative "config/environment"\nrun Rails.application\n),
    "config/heron.rb" => "metrics false # its fixed development port may be taken\nlog_format :json\n",
    "app/controllers/pages_controller.rb" => <<~'RUBY',
      class PagesController < ActionController::Base
        # A hint of its own, then a page whose preload_link_tag sends another.
        def hints
          request.send_early_hints("link" => "</app.js>; rel=preload; as=script")
          render inline: "<%= preload_link_tag('/app.css') %><p>page over <%= request.env['SERVER_PROTOCOL'] %></p>"
        end
      end
    RUBY
    "bin/rails" => <<~RUBY,
      #!#{RbConfig.ruby}
      $LOAD_PATH.unshift(#{File.join(InstallHelper::ROOT, 'lib').inspect})
      APP_PATH = File.expand_path("../config/application", __dir__)
      require "rails/commands"
    RUBY
  }.freeze

  def setup
    @gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "Rails is not installed (bin/setup-rails installs it; bin/test runs it)"
  end

  def test_rails_server_in_development_binds_localhost_sends_early_hints_and_logs_json
    Dir.mktmpdir("heron-rails") do |dir|
      write_app(dir)
      port = free_port
      serving(rails_env, %W[bin/rails server -u heron -p #{port} --early-hints], chdir: dir) do |log|
        assert_equal "200", get_when_up(port, "/hints", log).code
        assert_localhost_on_both_families(port)
        assert_early_hints(port)
        assert_rails_lines_are_json_with_the_request_id(port, log)
      end
    end
  end

  # Production, two workers, started with `heron`; the app logs to stdout with Rails' generated
  # `log_tags [:request_id]`: Rails' lines are JSON with the worker's index and the tags.
  def test_production_cluster_rails_lines_are_json_with_the_worker_and_tags
    Dir.mktmpdir("heron-rails") do |dir|
      write_app(dir)
      write_files(dir, "config/environments/production.rb" => <<~RUBY)
        Rails.application.configure do
          config.logger = ActiveSupport::TaggedLogging.new(ActiveSupport::Logger.new($stdout))
          config.log_tags = [:request_id]
          config.log_level = :info
        end
      RUBY
      port = free_port
      argv = [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-e", "production", "-w", "2", "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      serving(rails_env.merge("RAILS_ENV" => "production"), argv, chdir: dir) do |log|
        assert_equal "200", get_when_up(port, "/hints", log).code
        id = "cluster-json-check-1"
        assert_equal "200", Net::HTTP.start("127.0.0.1", port) { |http| http.get("/hints", "x-request-id" => id) }.code
        lines = nil
        eventually(timeout: 30) { (lines = File.readlines(log).select { |line| line.include?(id) }).size >= 3 }
        rails = lines.map { |line| JSON.parse(line) }.select { |object| object["source"] == "rails" }
        assert(rails.any? { |object| object["message"].start_with?('Started GET "/hints"') }, lines.join)
        assert(rails.all? { |object| object["request_id"] == id && object["tags"] == [id] && [0, 1].include?(object["worker"]) }, lines.join)
      end
    end
  end

  private

  def assert_localhost_on_both_families(port)
    %w[-4 -6].each do |family|
      out = curl_trace(family, "http://localhost:#{port}/hints")
      assert_match(/Connected to localhost \((127\.0\.0\.1|::1)\)/, out)
      assert_includes out, "page over HTTP/1.1", "curl #{family}"
    end
    assert_includes curl_trace("-6", "http://localhost:#{port}/hints"), "Connected to localhost (::1)"
  end

  def assert_early_hints(port)
    { "--http1.1" => "HTTP/1.1 103 Early Hints", "--http2-prior-knowledge" => "HTTP/2 103" }.each do |flag, status|
      out = curl_trace(flag, "http://127.0.0.1:#{port}/hints")
      hints = out.index("< #{status}")
      assert hints, "no 103 over #{flag}:\n#{out}"
      assert_match(%r{< link: </app.js>; rel=preload; as=script\r?\n(.|\n)*< link: </app.css>; rel=preload; as=style}, out[hints..])
      assert_operator hints, :<, out.index(/< HTTP\S* 200/)
    end
    out = curl_trace("--http1.0", "http://127.0.0.1:#{port}/hints")
    refute_match(%r{^< HTTP/\S+ 103}, out) # not "103" alone: the port number may hold it
    assert_includes out, "page over HTTP/1.0"
  end

  def assert_rails_lines_are_json_with_the_request_id(port, log)
    id = curl_trace("--http1.1", "-H", "x-request-id: json-log-check-1", "http://127.0.0.1:#{port}/hints")[/< x-request-id: (\S+)/, 1]
    assert_equal "json-log-check-1", id
    lines = nil
    eventually(timeout: 30) { (lines = File.readlines(log).select { |line| line.include?(id) }).size >= 3 }
    objects = lines.map { |line| JSON.parse(line) }
    rails = objects.select { |object| object["source"] == "rails" }
    assert(rails.any? { |object| object["message"].start_with?('Started GET "/hints"') }, lines.join)
    assert(rails.any? { |object| object["message"].start_with?("Completed 200 OK") }, lines.join)
    assert(rails.all? { |object| object["request_id"] == id && %w[info debug].include?(object["level"]) && object["time"] && !object["message"].end_with?("\n") }, lines.join)
    assert(objects.any? { |object| object["path"] == "/hints" && object["status"] == 200 && !object.key?("source") },
           "Heron's access line with the same id:\n#{lines.join}")
  end

  def rails_env
    { "RAILS_ENV" => "development", "GEM_HOME" => @gem_home, "GEM_PATH" => [@gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
  end

  def write_app(dir)
    write_files(dir, APP)
    File.chmod(0o755, File.join(dir, "bin/rails"))
    %w[tmp log].each { |sub| FileUtils.mkdir_p(File.join(dir, sub)) }
  end
end
