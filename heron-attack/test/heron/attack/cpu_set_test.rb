# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/cpu_set"

class CpuSetTest < Minitest::Test
  CpuSet = Heron::Attack::CpuSet

  def test_parses_and_prints_linux_cpu_lists
    set = CpuSet.parse("0-3,6,8-9")
    assert_equal [0, 1, 2, 3, 6, 8, 9], set.cpus
    assert_equal "0-3,6,8-9", set.to_s
    assert_equal "0,2", (CpuSet.parse("0-2") & CpuSet.parse("0,2,5")).to_s
    assert_equal 6, (CpuSet.parse("0-2") | CpuSet.parse("2-5")).size
    ["", "a", "1-", "1,,2", "0-1\n"].each { |bad| assert_raises(ArgumentError, bad) { CpuSet.parse(bad) } }
  end

  def test_reads_a_processes_affinity_from_proc
    out = IO.popen(["taskset", "-c", "0", RbConfig.ruby, "-I", File.expand_path("../../../lib", __dir__), "-rheron/attack/cpu_set",
                    "-e", "print Heron::Attack::CpuSet.mine, ' ', Heron::Attack::CpuSet.of(Process.pid)"], &:read)
    assert_equal "0 0", out
    assert_nil CpuSet.of(2**22 + 1) # no such process
  end
end
