# frozen_string_literal: true

require "json"
require "simplecov"

# The coverage of the `heron` processes the tests spawn (test/support/coverage_boot.rb), each
# stored in a directory of its own, coverage/processes/PID/, and folded into the suite's
# coverage/.resultset.json by the test process when it ends. Stored straight into the shared file,
# each process's exit read and rewrote every result before it (tens of MB by the suite's end, a
# CPU-second and more per `heron` stopped, on the path of the test that stops it).
module CoverageProcesses
  # @param pid [Integer] the process whose coverage the directory will hold.
  # @return [String] coverage_dir, relative to root, for that process.
  def self.dir(pid) = "coverage/processes/#{pid}"

  # Moves every finished process's result into the suite's resultset (under SimpleCov's lock on
  # it, and each process's own lock on its file) and deletes that process's file. The files are
  # listed again under the lock: two suites ending at once in one checkout (COVERAGE=1 runs side by
  # side) each listed the same files, and the second to get the lock raised Errno::ENOENT deleting
  # the files the first had taken, failing a run whose tests had all passed.
  # @return [void]
  def self.fold
    return if files.empty?
    SimpleCov::ResultMerger.synchronize_resultset do
      results = SimpleCov::ResultMerger.read_resultset
      files.each { |file| results.merge!(take(file)) }
      File.write(SimpleCov::ResultMerger.resultset_path, JSON.generate(results))
    end
  end

  # @return [Array<String>] the processes' result files there are now.
  def self.files = Dir[File.join(SimpleCov.root, "coverage/processes/*/.resultset.json")]

  # @return [Hash] the results in a process's file, which is deleted.
  def self.take(file)
    File.open(File.join(File.dirname(file), ".resultset.json.lock"), File::RDWR | File::CREAT) do |lock|
      lock.flock(File::LOCK_EX)
      SimpleCov::ResultMerger.parse_file(file).tap { File.delete(file) }
    end
  end
  private_class_method :take, :files
end
