# frozen_string_literal: true

require "test_helper"

# PR_SET_PDEATHSIG through Fiddle: a grandchild that asked for it gets SIGTERM when its parent is
# SIGKILLed (the master-alive pipe is the other line; here there is none).
class ParentDeathTest < Minitest::Test
  def test_the_child_gets_sigterm_when_its_parent_is_killed
    reader, writer = IO.pipe
    parent = fork do
      reader.close
      child = fork do
        trap("TERM") { writer.write("term\n"); exit!(0) }
        armed = Heron::Cluster::ParentDeath.watch(Process.ppid)
        writer.write("#{armed} #{Process.pid}\n")
        sleep 30
        exit!(1)
      end
      sleep 30 if child
    end
    writer.close
    armed, = reader.gets.split
    assert_equal "true", armed
    Process.kill("KILL", parent)
    Process.wait(parent)
    assert reader.wait_readable(10), "the child heard nothing"
    assert_equal "term\n", reader.gets
  ensure
    reader&.close
  end
end
