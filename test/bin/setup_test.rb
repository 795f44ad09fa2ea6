# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require_relative "../support/fresh_machine"

# bin/setup's package step on a fresh machine: a PATH with only Debian's required packages,
# Ruby, Bundler and a C compiler, and HERON_SETUP_ROOT pointing at an empty directory so that no
# header, library or jar of this machine is found. A stand-in apt-get records what it is asked.
class SetupTest < Minitest::Test
  include FreshMachine

  SETUP = File.join(ProcessHelper::ROOT, "bin/setup")
  # Everything the suite uses that a fresh machine lacks, as bin/setup names it.
  PACKAGES = %w[wrk curl nghttp2-client chromium nginx-light libnginx-mod-http-echo httperf haproxy iproute2 prometheus systemd valgrind
                ruby-rspec clang npm
                libclang-rt-14-dev libsqlite3-dev libyaml-dev libssl-dev libpq-dev ruby-dev postgresql
                default-jre-headless libhdrhistogram-java stress-ng].freeze

  def setup
    @dir = Dir.mktmpdir("heron-setup")
    @bin = fresh_machine_path(File.join(@dir, "bin"))
    @calls = File.join(@dir, "apt-get.calls")
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def test_a_fresh_machine_gets_every_package_in_one_install
    stand_in(@bin, "apt-get", %(echo "$*" >> #{@calls}))
    stand_in(@bin, "id", "echo 0") # root, as in a container
    out, status = packages_only
    assert status.success?, out
    update, install, *rest = File.readlines(@calls, chomp: true)
    assert_equal ["update -qq", []], [update, rest], out
    assert_equal ["install", "-y", "-qq", *PACKAGES], install.split, out
  end

  def test_without_root_apt_get_runs_under_sudo
    stand_in(@bin, "apt-get", %(echo "apt-get $*" >> #{@calls}))
    stand_in(@bin, "sudo", %(echo "sudo" >> #{@calls}; exec "$@"))
    stand_in(@bin, "id", "echo 1000")
    out, status = packages_only
    assert status.success?, out
    assert_equal ["sudo", "apt-get update -qq", "sudo", "apt-get install -y -qq #{PACKAGES.join(' ')}"],
                 File.readlines(@calls, chomp: true)
  end

  def test_without_apt_get_one_message_names_the_packages
    out, status = packages_only
    assert_equal 1, status.exitstatus, out
    assert_match(/\Asetup: the suite needs these Debian packages; install them .*\n  #{PACKAGES.join(' ')}\n\z/, out)
  end

  def test_without_root_or_sudo_one_message_names_the_packages
    stand_in(@bin, "apt-get", %(echo "$*" >> #{@calls}))
    stand_in(@bin, "id", "echo 1000")
    out, status = packages_only
    assert_equal 1, status.exitstatus, out
    assert_match(/\Asetup: the suite needs these Debian packages; .*\n  #{PACKAGES.join(' ')}\n\z/, out)
    refute File.exist?(@calls), "apt-get is not run without root"
  end

  # The stand-ins replace the PATH's symlinks to the machine's programs; they never write through
  # them (an earlier version of this test replaced the machine's /usr/bin/id with `echo 1000`).
  def test_a_stand_in_leaves_the_machines_program_alone
    program = File.join(@dir, "program")
    File.write(program, "the machine's own")
    File.symlink(program, File.join(@bin, "tool"))
    stand_in(@bin, "tool", "echo stand-in")
    assert_equal "the machine's own", File.read(program)
    assert_equal "stand-in\n", Open3.capture2(File.join(@bin, "tool")).first
  end

  private

  def packages_only
    root = File.join(@dir, "root")
    Dir.mkdir(root)
    env = { "PATH" => @bin, "HERON_SETUP_ROOT" => root }
    Open3.capture2e(env, File.join(@bin, "bash"), SETUP, "--packages-only", unsetenv_others: false)
  end
end
