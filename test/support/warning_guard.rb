# frozen_string_literal: true

# bin/test runs the suite with warnings on (-W). A warning raised from Heron's own files (lib/)
# fails the run, listed at the end; warnings from gems are printed as usual and do not count.
module WarningGuard
  LIB = File.expand_path("../../lib", __dir__)

  class << self
    # @return [Array<String>] warnings from lib/ seen so far in this process.
    def seen = (@seen ||= [])
  end

  # Records a warning from lib/, then prints it as Ruby would.
  def warn(message, *args, **kwargs)
    WarningGuard.seen << message if message.include?(LIB)
    super
  end
end

Warning.singleton_class.prepend(WarningGuard)

Minitest.after_run do
  next if WarningGuard.seen.empty?
  $stderr.puts "\n#{WarningGuard.seen.size} warning(s) from lib/:", WarningGuard.seen.uniq
  exit 1
end
