# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "tmpdir"
require "heron/attack"
require "heron/attack/core_sharing"

# Whether the generator shares a core with a target on this machine, against real servers
# pinned with taskset and generators run as their own processes, pinned too.
class CoreSharingTest < Minitest::Test
  SUPPORT = File.expand_path("support", __dir__)
  LIB = File.expand_path("../../../lib", __dir__)
  EXE = File.expand_path("../../../exe/heron-attack", __dir__)

  # Starts TestServer in its own process pinned to `cpus`; yields its base URL and pid.
  def pinned_server(cpus)
    reader, writer = IO.pipe
    pid = Process.spawn("taskset", "-c", cpus, RbConfig.ruby, "-I", SUPPORT, "-rtest_server", "-e",
                        "s = TestServer.new.start; puts s.port; $stdout.flush; s.join_forever", out: writer)
    writer.close
    port = Timeout.timeout(60) { reader.gets }.to_i
    yield "http://127.0.0.1:#{port}", pid
  ensure
    Process.kill(:KILL, pid) if pid
    Process.wait(pid) if pid
    reader&.close
  end

  # Runs `heron-attack` pinned to `cpus`; returns its JSON report.
  def attack_from(cpus, url, *argv)
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      out, status = Open3.capture2e("taskset", "-c", cpus, RbConfig.ruby, "-I", LIB, EXE, url, "-r", "50", "-n", "5", "--json", json, *argv)
      assert status.success?, out
      JSON.parse(File.read(json))
    end
  end

  def sharing(url, processes)
    Heron::Attack::CoreSharing.new([Heron::Attack::Target.new("GET", "#{url}/")], processes)
  end

  def two_cpus!
    skip "needs two CPUs" if Heron::Attack::CpuSet.mine.size < 2
  end

  def test_a_generator_pinned_to_the_targets_core_is_warned
    pinned_server("0") do |url, pid|
      report = attack_from("0", "#{url}/")
      assert_equal [{ "host" => "127.0.0.1", "port" => URI(url).port, "target_pids" => [pid], "target_cpus" => "0",
                      "generator_cpus" => "0", "generator_processes" => 1, "shares_core" => true }], report["placement"]
      assert(report["warnings"].any? { |w| w.start_with?("the generator (1 process, CPUs 0) shares a core with the target 127.0.0.1:") })
    end
  end

  def test_a_generator_pinned_to_another_core_is_not
    two_cpus!
    pinned_server("0") do |url, _|
      report = attack_from("1", "#{url}/")
      assert_equal [false], report["placement"].map { |p| p["shares_core"] }
      assert(report["warnings"].none? { |w| w.include?("shares a core") }, report["warnings"].inspect)
    end
  end

  # The generator may use every CPU of the machine (n), one of them the target's: n - 1
  # processes and the target can each have a core, n processes and the target cannot.
  def test_more_processes_than_the_cpus_they_share
    two_cpus!
    n = Heron::Attack::CpuSet.mine.size
    pinned_server("0") do |url, pid|
      assert_equal [false], sharing(url, n - 1).placements.map { |p| p["shares_core"] }
      assert_equal [[[pid], true]], sharing(url, n).placements.map { |p| p.values_at("target_pids", "shares_core") }
      assert_match(/\Athe generator \(#{n} processes, CPUs [\d,-]+\) shares a core with the target 127.0.0.1:\d+ \(pid #{pid}, CPUs 0\)/,
                   sharing(url, n).warnings.first)
    end
  end

  # A master that forked a worker holds the listening socket too, but does not serve: the worker
  # is the target.
  def test_a_master_that_forked_a_worker_is_not_counted
    reader, writer = IO.pipe
    master = Process.spawn(RbConfig.ruby, "-rsocket", "-e", <<~RUBY, out: writer)
      server = TCPServer.new("127.0.0.1", 0)
      worker = fork { loop { server.accept.close } }
      puts "\#{server.addr[1]} \#{worker}"
      $stdout.flush
      Process.wait(worker)
    RUBY
    writer.close
    port, worker = Timeout.timeout(60) { reader.gets }.split.map(&:to_i)
    assert_equal [[worker]], sharing("http://127.0.0.1:#{port}", 1).placements.map { |p| p["target_pids"] }
  ensure
    Process.kill(:KILL, worker) if worker
    Process.kill(:KILL, master) if master
    Process.wait(master) if master
  end

  def test_a_target_on_another_machine_is_not_placed
    assert_empty sharing("http://192.0.2.1:80", 4).placements # TEST-NET-1: only classified, nothing is sent
  end
end
