# frozen_string_literal: true

require_relative "target"
require_relative "usage_error"

module Heron
  module Attack
    # Reads a targets file (`--targets FILE`), in the spirit of vegeta's http format: each
    # target starts with a `METHOD URL [weight=N]` line, followed by optional `Name: value`
    # header lines and an optional body line, `@PATH` (a file, relative to the targets file's
    # directory) or `@@TEXT` (inline). Blank lines and `#` comments are skipped, so the old
    # one-`METHOD URL`-per-line files still read the same. Command-line headers apply to every
    # target unless the target sets a header of the same name; the command-line body applies to
    # targets that have none.
    class TargetsFile
      MAX_FILE_BYTES = 16 * 1024 * 1024
      MAX_TARGETS = 10_000
      MAX_HEADERS = 100
      MAX_WEIGHT = 10_000
      MAX_BODY_BYTES = 16 * 1024 * 1024
      REQUEST_LINE = %r{\A(?<method>[A-Za-z]+)\s+(?<url>[a-z][a-z0-9+.-]*://\S+)(?:\s+(?<extra>.*))?\z}
      HEADER_LINE = /\A[!#$%&'*+.^_`|~0-9A-Za-z-]+:/

      # @param path [String] the targets file.
      # @param headers [Array<String>] command-line "Name: value" lines.
      # @param body [String, nil] the command-line body.
      # @param keepalive [Boolean]
      # @return [Array<Target>]
      # @raise [UsageError] naming the file and line of the first problem.
      def self.load(path, headers: [], body: nil, keepalive: true)
        new(path, headers: headers, body: body, keepalive: keepalive).targets
      end

      # @param path [String] @param headers [Array<String>] @param body [String, nil]
      # @param keepalive [Boolean] see {.load}.
      def initialize(path, headers: [], body: nil, keepalive: true)
        @path = path
        @headers = headers
        @body = body
        @keepalive = keepalive
      end

      # @return [Array<Target>] the file's targets, in order.
      # @raise [UsageError]
      def targets
        entries = parse(read)
        raise UsageError, "targets file #{@path} has no targets" if entries.empty?
        entries.map { |entry| build(entry) }
      end

      private

      def read
        raise UsageError, "targets file #{@path} is larger than #{MAX_FILE_BYTES} bytes" if File.size(@path) > MAX_FILE_BYTES
        File.binread(@path).force_encoding(Encoding::UTF_8)
      rescue SystemCallError => e
        raise UsageError, "cannot read targets file: #{e.message}"
      end

      def parse(text)
        text.each_line.with_index(1).each_with_object([]) do |(raw, number), entries|
          line = raw.strip
          next if line.empty? || line.start_with?("#")
          @number = number
          line!(line, entries)
        end
      end

      def line!(line, entries)
        return entries << start(line, entries.size) if line.match?(REQUEST_LINE)
        current = entries.last or fail!("expected 'METHOD URL', got #{line[0, 80].inspect}")
        return body!(current, line) if line.start_with?("@")
        fail!("expected 'Name: value', '@FILE', '@@TEXT' or 'METHOD URL', got #{line[0, 80].inspect}") unless line.match?(HEADER_LINE)
        fail!("a target has more than #{MAX_HEADERS} headers") if current[:headers].size >= MAX_HEADERS
        fail!("a header after the body line") if current.key?(:body)
        current[:headers] << line
      end

      def start(line, count)
        fail!("more than #{MAX_TARGETS} targets") if count >= MAX_TARGETS
        match = REQUEST_LINE.match(line)
        { method: match[:method], url: match[:url], weight: weight(match[:extra]), headers: [], line: @number }
      end

      def weight(extra)
        return 1 if extra.nil?
        value = extra[/\Aweight=(\d+)\z/, 1] or fail!("expected 'METHOD URL' or 'METHOD URL weight=N', got #{extra[0, 80].inspect} after the URL")
        fail!("weight must be 1..#{MAX_WEIGHT}") unless (1..MAX_WEIGHT).cover?(value.to_i)
        value.to_i
      end

      def body!(current, line)
        fail!("a target has two body lines") if current.key?(:body)
        current[:body] = line.start_with?("@@") ? line[2..].b : body_file(line[1..])
      end

      def body_file(name)
        fail!("'@' needs a file name") if name.empty?
        file = File.expand_path(name, File.dirname(@path))
        fail!("body file #{name} is larger than #{MAX_BODY_BYTES} bytes") if File.size(file) > MAX_BODY_BYTES
        File.binread(file)
      rescue SystemCallError => e
        fail!("cannot read body file: #{e.message}")
      end

      def build(entry)
        @number = entry[:line]
        names = entry[:headers].map { |h| h.split(":", 2).first.downcase }
        headers = @headers.reject { |h| names.include?(h.split(":", 2).first.strip.downcase) } + entry[:headers]
        Target.new(entry[:method], entry[:url], headers: headers, body: entry.fetch(:body, @body),
                                                 keepalive: @keepalive, weight: entry[:weight])
      rescue UsageError => e
        fail!(e.message)
      end

      def fail!(message)
        raise UsageError, "#{@path}:#{@number}: #{message}"
      end
    end
  end
end
