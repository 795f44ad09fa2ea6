# frozen_string_literal: true

# What heron-profiler's per-thread allocation counting (Heron::Profiler::ThreadAllocations, on
# under a thread-per-request server such as Puma) costs each allocation: 2M `"x" + "y"` (4M
# objects), best of 5, with the NEWOBJ hook off and then on. Writes
# bench/results/thread_allocations.md.
#
#   bundle exec ruby -Ilib -Iheron-profiler/lib bench/thread_allocations.rb

require "etc"
require "heron/profiler"
require_relative "lib/clock"

def timed
  Bench::Clock.elapsed { 2_000_000.times { "x" + "y" } }
end

3.times { timed }
off = Array.new(5) { timed }.min
Heron::Profiler::ThreadAllocations.enable
on = Array.new(5) { timed }.min
per = (on - off) / 4e6 * 1e9
page = <<~MD
  # Per-thread allocation counting (heron-profiler)

  `bundle exec ruby -Ilib -Iheron-profiler/lib bench/thread_allocations.rb`, #{Time.now.utc.strftime('%Y-%m-%d')},
  Ruby #{RUBY_VERSION}, #{Etc.nprocessors} CPUs (a shared machine).

  | 4M allocations (best of 5) | seconds |
  | --- | --- |
  | hook off (Heron, Falcon) | #{format('%.3f', off)} |
  | hook on (Puma: `ThreadAllocations.enable`) | #{format('%.3f', on)} |

  About #{per.round} ns more per allocation, in the whole process, while the hook is on.
MD
File.write(File.join(__dir__, "results/thread_allocations.md"), page)
puts page
