# frozen_string_literal: true

require "ipaddr"

module Heron
  module Profiler
    # The checks behind {Options}' keywords, by the type names of {Settings} (the same names as
    # Heron's own checks, which take over when the options come from Heron's configuration).
    # Each returns the coerced value or raises {OptionError} naming the option.
    module OptionTypes
      MAX_ENTRIES = 1000
      MAX_ENTRY_BYTES = 256

      module_function

      # @return [Integer] a whole number >= 1 ("10" is 10).
      def positive_integer(value, label) = integer(value, label, 1)

      # @return [Integer] a whole number >= 0.
      def non_negative_integer(value, label) = integer(value, label, 0)

      # @return [String] an absolute URL path such as "/__heron".
      def url_path(value, label)
        value.is_a?(String) && value.match?(%r{\A/[^\s?#]*\z}) ? value : invalid(label, "a path starting with /", value)
      end

      # @return [String, nil] nil, or a non-empty string.
      def optional_string(value, label)
        value.nil? || value.is_a?(String) && !value.empty? ? value : invalid(label, "a non-empty string", value)
      end

      # @return [Array<String>] the non-empty entries of a list or a comma-separated string (at
      #   most {MAX_ENTRIES}, each at most {MAX_ENTRY_BYTES} bytes).
      def strings(value, label)
        list = (value.is_a?(String) ? value.split(",") : Array(value)).map { |entry| entry.to_s.strip }.reject(&:empty?)
        invalid(label, "at most #{MAX_ENTRIES} entries", "#{list.size} entries") if list.size > MAX_ENTRIES
        long = list.find { |entry| entry.bytesize > MAX_ENTRY_BYTES }
        long ? invalid(label, "entries of at most #{MAX_ENTRY_BYTES} bytes", long) : list
      end

      # @return [Array<String>] IP addresses and CIDRs ("10.0.0.0/8").
      def cidrs(value, label)
        list = strings(value, label)
        list.each { |entry| IPAddr.new(entry) }
      rescue IPAddr::Error
        invalid(label, "a list of IP addresses or CIDRs like 10.0.0.0/8", list)
      end

      def integer(value, label, minimum)
        number = Integer(value.to_s, 10)
        number >= minimum ? number : invalid(label, "a whole number >= #{minimum}", value)
      rescue ArgumentError
        invalid(label, "a whole number >= #{minimum}", value)
      end

      def invalid(label, expected, value)
        raise OptionError, "profiler option #{label}: expected #{expected}, got #{value.inspect}"
      end
      private_class_method :integer, :invalid
    end
  end
end
