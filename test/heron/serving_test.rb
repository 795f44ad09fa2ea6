# frozen_string_literal: true

require "test_helper"
require "open3"
require "tmpdir"

# Heron::Serving in a fresh process each time: it is process-wide state.
class ServingTest < Minitest::Test
  LIB = File.expand_path("../../lib", __dir__)

  def test_hooks_wait_for_the_configuration_and_run_once_each
    script = <<~RUBY
      require "heron/serving"
      print Heron::Serving.active?, " "
      Heron::Serving.on_config { |config| print "early:", config, " " }
      Heron::Serving.start!
      print Heron::Serving.active?, " "
      Heron::Serving.start!(:the_config)
      Heron::Serving.start!(:again)
      Heron::Serving.on_config { |config| print "late:", config }
    RUBY
    # the early hook ran once, with the first configuration; a late one gets the latest
    assert_equal "false true early:the_config late:again", run_ruby(script, Dir.pwd)
  end

  def test_rails_is_not_loaded_outside_a_rails_app
    script = %(require "heron/serving"; Heron::Serving.start!; print defined?(Rails).inspect, " ", defined?(Heron::Railtie).inspect)
    Dir.mktmpdir { |dir| assert_equal "nil nil", run_ruby(script, dir) }
  end

  private

  def run_ruby(script, dir)
    out, err, status = Open3.capture3(RbConfig.ruby, "-I", LIB, "-e", script, chdir: dir)
    assert status.success?, err
    out
  end
end
