# frozen_string_literal: true

require "rack/utils"

module Heron
  # Raised when the app returns headers that cannot be written safely (CR/LF in a value, an
  # invalid name). The connection answers 500.
  class InvalidResponse < StandardError; end

  # Builds the status line and header block of a response.
  class Head
    STATUS_LINES = Hash.new do |cache, status|
      reason = Rack::Utils::HTTP_STATUS_CODES[status] || "Unknown"
      cache[status] = "HTTP/1.1 #{status} #{reason}\r\n".b.freeze
    end
    SKIPPED = { "rack.hijack" => true, "connection" => true, "transfer-encoding" => true }.freeze
    NAME = /\A[!#$%&'*+\-.^_`|~0-9a-z]+\z/
    private_constant :SKIPPED, :NAME

    # @param status [Integer]
    # @param headers [Hash{String => String, Array<String>}] the app's headers (lower-case names).
    # @param extra [String] framing lines the server adds ("content-length: 5\r\n", ...).
    # @return [String] the whole head, ending in the blank line (binary, mutable).
    def self.build(status, headers, extra)
      head = String.new(STATUS_LINES[status], capacity: 512)
      headers.each { |name, value| add(head, name, value) unless SKIPPED[name] }
      head << extra << "\r\n"
    end

    # Appends one header (every value of an Array) to `head`.
    # @return [void]
    def self.add(head, name, value)
      raise InvalidResponse, "invalid header name #{name.inspect}" unless NAME.match?(name)
      if value.is_a?(Array)
        value.each { |item| add_line(head, name, item) }
      else
        add_line(head, name, value)
      end
    end

    # Appends `name: value` after checking the value cannot split the response.
    # @return [void]
    def self.add_line(head, name, value)
      value = value.to_s
      if value.include?("\n") || value.include?("\r")
        raise InvalidResponse, "header #{name} contains a line break"
      end
      head << name << ": " << value << "\r\n"
    end
    private_class_method :add, :add_line
  end
end
