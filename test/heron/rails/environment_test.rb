# frozen_string_literal: true

require "test_helper"
require_relative "../../support/install_helper"
require_relative "../../support/rails_app"

# A real Rails 7.1 app (ActiveRecord on SQLite; Rails from HERON_RAILS_GEM_HOME) under `rackup -s
# heron`: Heron's environment is the app's (rackup's own default `-E development` does not beat
# RAILS_ENV). heron-profiler's rails_environment_test checks who gets the profiler's headers.
class RailsEnvironmentTest < Minitest::Test
  include InstallHelper
  include RailsApp

  def test_rackup_with_rails_env_production_runs_heron_as_production
    with_queries_app("production", :rackup, "127.0.0.1") do |port, log|
      response = get_when_up(port, "/", log)
      assert_equal "production 21 127.0.0.1", response.body
      assert_match(/, production environment,/, File.read(log))
      assert_nil response["server-timing"], "no profiling in production"
    end
  end
end
