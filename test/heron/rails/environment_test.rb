# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "socket"
require_relative "../../support/install_helper"
require_relative "../../support/rails_app"

# A real Rails 7.1 app (ActiveRecord on SQLite; Rails from HERON_RAILS_GEM_HOME) under `rackup -s
# heron` and `rails server -u heron`: Heron's environment is the app's (rackup's own default
# `-E development` does not beat RAILS_ENV), and the profiler's headers (`server-timing`,
# `x-heron-n-plus-one` with its SQL) reach only the clients the dashboard's rule allows, in
# development too: not a client on a non-loopback address, not one behind a proxy.
class RailsEnvironmentTest < Minitest::Test
  include InstallHelper
  include RailsApp

  FILES = {
    "config/database.yml" => <<~YAML,
      development:
        adapter: sqlite3
        database: db/development.sqlite3
      production:
        adapter: sqlite3
        database: db/production.sqlite3
    YAML
    "app/controllers/queries_controller.rb" => <<~'RUBY',
      class QueriesController < ActionController::API
        # The same query from one call site, 6 times: an N+1 for the profiler.
        def show
          values = (1..6).map { |i| ActiveRecord::Base.connection.select_value("SELECT #{i}") }
          render plain: "#{Rails.env} #{values.sum} #{request.remote_addr}"
        end
      end
    RUBY
  }.freeze

  def test_rackup_with_rails_env_production_runs_heron_as_production
    with_app("production", :rackup, "127.0.0.1") do |port, log|
      response = get_when_up(port, "/", log)
      assert_equal "production 21 127.0.0.1", response.body
      assert_match(/, production environment,/, File.read(log))
      assert_nil response["server-timing"], "no profiling in production"
    end
  end

  def test_a_non_loopback_client_in_development_gets_no_profiler_headers
    address = non_loopback_address or skip "this machine has no non-loopback address"
    with_app("development", :rails, "0.0.0.0") do |port, log|
      local = get_when_up(port, "/", log)
      assert_equal "development 21 127.0.0.1", local.body
      assert_match(/, development environment,/, File.read(log))
      assert_match(/heron;desc=/, local["server-timing"], "a loopback client gets the profiler's headers")
      refute_nil local["x-heron-n-plus-one"]
      remote = Net::HTTP.start(address, port, local_host: address) { |http| http.get("/") }
      proxied = Net::HTTP.start("127.0.0.1", port) { |http| http.get("/", "X-Forwarded-For" => "203.0.113.9") }
      assert_equal "development 21 #{address}", remote.body, "the server saw a non-loopback peer"
      [remote, proxied].each do |response|
        assert_nil response["server-timing"], response.to_hash.inspect
        assert_empty response.to_hash.keys.grep(/\Ax-heron/), response.to_hash.inspect
      end
    end
  end

  private

  # An address of this machine's own that is not loopback: a connection from it to itself is a
  # real non-loopback client.
  def non_loopback_address
    Socket.ip_address_list.find { |ai| ai.ipv4? && !ai.ipv4_loopback? && !ai.ipv4_multicast? }&.ip_address
  end

  def with_app(environment, launcher, host)
    Dir.mktmpdir("heron-rails-env") do |dir|
      write_rails_app(dir, railties: %w[active_record action_controller], routes: 'root "queries#show"', files: FILES)
      File.write(File.join(dir, "config/heron.rb"), "metrics false\ncontrol_bind nil\n")
      port = free_port
      serving(rails_env(environment), rails_app_command(launcher, host, port), chdir: dir) { |log| yield port, log }
    end
  end
end
