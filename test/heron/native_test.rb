# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require_relative "../support/install_helper"

# Heron::Native in a source checkout without the compiled extension (what Bundler's `path:`
# gives): it compiles once and loads; without a compiler it fails with a message that says what
# to install and what to run. The compiling case runs end to end in test/install/path_bundle_test.rb.
class NativeTest < Minitest::Test
  include InstallHelper

  LOAD = 'require "heron/native"; Heron::Native.load("heron_ext"); print Heron::HTTPParser.name'

  def test_a_checkout_without_a_compiler_gets_a_clear_load_error
    Dir.mktmpdir("heron-native") do |dir|
      copy_checkout(dir)
      output, status = Open3.capture2e({ "PATH" => File.join(dir, "no-tools") }, RbConfig.ruby, "-Ilib", "-e", LOAD, chdir: dir)
      refute status.success?, output
      assert_includes output, "heron: compiling the C extension heron_ext in #{dir}/ext/heron"
      assert_includes output, "heron: the C extension heron_ext is not built and compiling it failed."
      assert_includes output, "apt-get install build-essential ruby-dev"
      assert_includes output, "run `bundle exec rake compile` in #{dir}"
      refute File.exist?(File.join(dir, "lib/heron/heron_ext.so"))
    end
  end

  def test_an_installed_gem_without_its_extension_is_not_rebuilt
    Dir.mktmpdir("heron-native") do |dir|
      copy_checkout(dir)
      FileUtils.rm_rf(File.join(dir, "ext"))
      output, status = Open3.capture2e(RbConfig.ruby, "-Ilib", "-e", LOAD, chdir: dir)
      refute status.success?
      assert_match(/cannot load such file -- .*heron_ext/, output)
      refute_includes output, "compiling"
    end
  end
end
