# frozen_string_literal: true

# bin/test runs the suite with warnings on (-W). A warning raised from the files of Heron's gems
# (lib/, heron-profiler/lib/, heron-attack/lib/) fails the run, listed at the end; one from the
# repository's other code (tests, bench/, examples/, exe/) is printed. Warnings from gems and
# Ruby's own library (and the Rails gems bin/setup-rails puts in tmp/) are not Heron's to fix
# and are not printed (a count is, at the end); HERON_GEM_WARNINGS=1 prints them too.
module WarningGuard
  ROOT = File.expand_path("../..", __dir__)
  LIB = File.join(ROOT, "lib")
  # Every gem's lib/ directory, each ending in "/".
  LIBS = [LIB, *Dir[File.join(ROOT, "heron-*/lib")]].map { |dir| File.join(dir, "") }.freeze
  # Parts of the checkout that are not the repository's own code.
  NOT_OURS = %w[tmp vendor].map { |dir| File.join(ROOT, dir, "") }.freeze
  # "path:line: warning: ...", as Ruby writes a warning with a location.
  LOCATED = /\A(?<path>[^:\n]+):\d+: /

  class << self
    # @return [Array<String>] warnings from lib/ seen so far in this process.
    def seen = (@seen ||= [])

    # @return [Integer] warnings from gems and Ruby's library left out so far.
    def third_party = (@third_party ||= 0)

    # Counts a warning left out.
    def skip_third_party = (@third_party = third_party + 1)

    # @param message [String] the warning.
    # @param callers [Array<Thread::Backtrace::Location>] where Warning.warn was called from.
    # @return [String, nil] the file the warning is about: its own location, else the first
    #   caller's that is not Ruby's warning machinery (a `warn "..."` without uplevel).
    def source(message, callers)
      return Regexp.last_match(:path) if message.match(LOCATED)
      callers.map(&:absolute_path).find { |path| path && path != __FILE__ && !path.start_with?("<internal:") }
    end

    # @return [Boolean] whether a file is the repository's own code.
    def ours?(path)
      return false if path.nil?
      path = File.expand_path(path)
      path.start_with?(File.join(ROOT, "")) && NOT_OURS.none? { |dir| path.start_with?(dir) }
    end

    # @return [Boolean] whether a warning is about one of the gems' lib/ files.
    def lib?(message, source)
      LIBS.any? { |dir| message.include?(dir) || source&.start_with?(dir) }
    end
  end

  # Records a warning from a gem's lib/ and prints it; prints the repository's other warnings; leaves
  # out those from gems and Ruby's library.
  def warn(message, *args, **kwargs)
    source = WarningGuard.source(message, caller_locations(1, 8))
    lib = WarningGuard.lib?(message, source)
    WarningGuard.seen << message if lib
    return super if lib || WarningGuard.ours?(source) || ENV["HERON_GEM_WARNINGS"] == "1"
    WarningGuard.skip_third_party
    nil
  end
end

Warning.singleton_class.prepend(WarningGuard)

Minitest.after_run do
  if WarningGuard.third_party.positive?
    $stderr.puts "\n#{WarningGuard.third_party} warning(s) from gems and Ruby's library not shown (HERON_GEM_WARNINGS=1 shows them)"
  end
  next if WarningGuard.seen.empty?
  $stderr.puts "\n#{WarningGuard.seen.size} warning(s) from lib/:", WarningGuard.seen.uniq
  exit 1
end
