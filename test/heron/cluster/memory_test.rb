# frozen_string_literal: true

require "test_helper"

class MemoryTest < Minitest::Test
  def test_rss_of_a_live_process_and_nil_for_a_missing_one
    rss = Heron::Cluster::Memory.rss(Process.pid)
    assert_operator rss, :>, 1024 * 1024
    assert_operator rss, :<, 64 * 1024 * 1024 * 1024
    assert_nil Heron::Cluster::Memory.rss(2**22 + 12_345)
  end
end
