# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/process_cost"

class ProcessCostTest < Minitest::Test
  def test_measures_this_process_cpu_and_collections
    cost = Heron::Attack::ProcessCost.new
    value = cost.measure do
      GC.start
      deadline = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) + 0.02
      nil while Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) < deadline
      :done
    end
    assert_equal :done, value
    assert_operator cost.cpu, :>=, 0.02
    assert_operator cost.gc_count, :>=, 1
  end

  def test_merge_adds
    a = Heron::Attack::ProcessCost.new
    b = Heron::Attack::ProcessCost.new
    a.cpu, a.gc_count, a.gc_ms = 0.5, 2, 30
    b.cpu, b.gc_count, b.gc_ms = 0.25, 3, 40
    a.merge!(b)
    assert_equal [0.75, 5, 70], [a.cpu, a.gc_count, a.gc_ms]
  end
end
