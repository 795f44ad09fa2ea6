# frozen_string_literal: true

require_relative "../trusted_proxies"

module Heron
  module Config
    # Coerces one raw setting (a String from the command line, or any Ruby value from the config
    # file) into the type Heron uses, or raises {Heron::ConfigError} naming the setting.
    #
    # Every method takes the value and the label to name in the message (`--workers` on the command
    # line, `workers` in a config file) and returns the coerced value.
    module Types
      INTEGER = /\A[-+]?\d+\z/
      NUMBER = /\A[-+]?(\d+(\.\d*)?|\.\d+)\z/
      TRUE_WORDS = %w[true yes on 1].freeze
      FALSE_WORDS = %w[false no off 0].freeze
      TCP_BIND = %r{\Atcp://(\[[0-9a-fA-F:.]+\]|[^\[\]:/\s]+):(\d+)(\?proxy_protocol=v[12])?\z}
      UNIX_BIND = %r{\Aunix://[^\s]+\z}
      SSL_BIND = %r{\Assl://(\[[0-9a-fA-F:.]+\]|[^\[\]:/\s?]+):(\d+)(\?\S*)?\z}

      module_function

      # @param value [Integer, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [Integer] a whole number >= 0.
      def non_negative_integer(value, label)
        integer(value, label, 0, "a non-negative integer")
      end

      # @param value [Integer, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [Integer] a whole number >= 1.
      def positive_integer(value, label)
        integer(value, label, 1, "a positive integer")
      end

      # @param value [Integer, String, nil] the raw value; nil means no limit.
      # @param label [String] the setting's name for the error message.
      # @return [Integer, nil] a whole number >= 1, or nil.
      def optional_size(value, label)
        return nil if value.nil? || value.to_s == "unlimited"
        integer(value, label, 1, "a positive integer or unlimited")
      end

      # @param value [Integer, String, nil] the raw value; nil means off.
      # @param label [String] the setting's name for the error message.
      # @return [Integer, nil] a whole number >= 0, or nil.
      def optional_count(value, label)
        return nil if value.nil? || value == false
        integer(value, label, 0, "a non-negative integer or nil")
      end

      # @param value [Integer, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [Integer] a TCP port, 0 (any free port) to 65535.
      def port(value, label)
        number = integer(value, label, 0, "a port number (0-65535)")
        number <= 65_535 ? number : fail_with(label, "a port number (0-65535)", value)
      end

      # @param value [Numeric, String] the raw value, in seconds.
      # @param label [String] the setting's name for the error message.
      # @return [Float] a number of seconds >= 0.
      def duration(value, label)
        seconds = parse_number(value)
        return seconds.to_f if seconds && seconds >= 0 && seconds.finite?
        fail_with(label, "a non-negative number of seconds", value)
      end

      # @param value [Numeric, String, nil] the raw value, in seconds; nil or "off" means no limit.
      # @param label [String] the setting's name for the error message.
      # @return [Float, nil] a number of seconds > 0, or nil.
      def optional_duration(value, label)
        return nil if value.nil? || value.to_s == "off"
        seconds = parse_number(value)
        return seconds.to_f if seconds&.positive? && seconds.finite?
        fail_with(label, "a positive number of seconds or off", value)
      end

      # @param value [Array<String>, String] CIDRs or addresses, as a list or comma-separated.
      # @param label [String] the setting's name for the error message.
      # @return [Array<String>] the entries, each checked.
      def cidrs(value, label)
        list = value.is_a?(String) ? value.split(",").map(&:strip).reject(&:empty?) : Array(value).map(&:to_s)
        bad = list.find { |entry| !TrustedProxies.valid?(entry) }
        bad ? fail_with(label, "a list of IP addresses or CIDRs like 10.0.0.0/8", bad) : list
      end

      # @param value [Array<String>, String] a list, or comma-separated entries.
      # @param label [String] the setting's name for the error message.
      # @return [Array<String>] the non-empty entries: at most 1,000, each at most 256 bytes.
      def strings(value, label)
        list = value.is_a?(String) ? value.split(",") : Array(value)
        list = list.map { |entry| entry.to_s.strip }.reject(&:empty?)
        return fail_with(label, "at most 1000 entries", "#{list.size} entries") if list.size > 1000
        bad = list.find { |entry| entry.bytesize > 256 }
        bad ? fail_with(label, "entries of at most 256 bytes", bad) : list
      end

      # @param value [Numeric, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [Float] seconds, more than zero.
      def positive_duration(value, label)
        seconds = parse_number(value)
        return seconds.to_f if seconds&.positive? && seconds.finite?
        fail_with(label, "a positive number of seconds", value)
      end

      # @param value [Boolean, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [Boolean]
      def boolean(value, label)
        return value if value == true || value == false
        word = value.to_s.downcase
        return true if TRUE_WORDS.include?(word)
        return false if FALSE_WORDS.include?(word)
        fail_with(label, "true or false", value)
      end

      # @param value [Boolean, String, nil] the raw value; nil means "decide from the environment".
      # @param label [String] the setting's name for the error message.
      # @return [Boolean, nil]
      def optional_boolean(value, label)
        value.nil? || value.to_s == "auto" ? nil : boolean(value, label)
      end

      # @param value [Symbol, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @param choices [Array<Symbol>] the allowed values.
      # @return [Symbol] one of `choices`.
      def choice(value, label, choices)
        symbol = value.to_s.to_sym if value.is_a?(String) || value.is_a?(Symbol)
        return symbol if choices.include?(symbol)
        fail_with(label, "one of #{choices.join(', ')}", value)
      end

      # @param value [String, Symbol] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [String] a non-empty string.
      def string(value, label)
        text = value.to_s if value.is_a?(String) || value.is_a?(Symbol)
        text.nil? || text.empty? ? fail_with(label, "a non-empty string", value) : text
      end

      # @param value [String, Symbol, nil] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [String, nil] a non-empty string, or nil.
      def optional_string(value, label)
        value.nil? ? nil : string(value, label)
      end

      # @param value [String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [String] an absolute URL path such as "/__heron".
      def url_path(value, label)
        path = value.to_s if value.is_a?(String)
        path&.match?(%r{\A/[^\s?#]*\z}) ? path : fail_with(label, "a path starting with /", value)
      end

      # @param value [String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [String] a bind URI: tcp://HOST:PORT or unix:///PATH.
      def bind(value, label)
        uri = value.to_s if value.is_a?(String)
        return uri if uri && (tcp_bind?(uri) || ssl_bind?(uri) || uri.match?(UNIX_BIND))
        fail_with(label, "a bind URI like tcp://HOST:PORT, ssl://HOST:PORT?cert=PATH&key=PATH or unix:///PATH", value)
      end

      # @param value [String, nil] the raw value; nil turns the listener off.
      # @param label [String] the setting's name for the error message.
      # @return [String, nil]
      def optional_bind(value, label)
        value.nil? ? nil : bind(value, label)
      end

      # @param value [Array<String>, String] one bind URI or a list of them.
      # @param label [String] the setting's name for the error message.
      # @return [Array<String>]
      def binds(value, label)
        Array(value).map { |uri| bind(uri, label) }
      end

      # @param value [#write] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [#write] an IO-like object.
      def writer(value, label)
        value.respond_to?(:write) ? value : fail_with(label, "an IO (something with #write)", value)
      end

      # @param value [#info, #warn, #error, nil] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [#info, #warn, #error, nil] a Logger-compatible object, or nil.
      def optional_logger(value, label)
        return value if value.nil? || %i[info warn error].all? { |level| value.respond_to?(level) }
        fail_with(label, "a Logger (something with #info, #warn and #error)", value)
      end

      # @param value [#call, nil] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [#call, nil] a Rack app, or nil.
      def optional_callable(value, label)
        value.nil? || value.respond_to?(:call) ? value : fail_with(label, "a Rack app (#call)", value)
      end

      # @param value [Array<#call>] the raw value.
      # @param label [String] the setting's name for the error message.
      # @return [Array<#call>] hooks, in the order they run.
      def callables(value, label)
        list = Array(value)
        list.all? { |hook| hook.respond_to?(:call) } ? list : fail_with(label, "a list of blocks", value)
      end

      # Raises the error every coercion raises.
      # @param label [String] the setting's name.
      # @param expected [String] what the setting must be.
      # @param value [Object] what was given.
      # @raise [Heron::ConfigError]
      def fail_with(label, expected, value)
        raise ConfigError, "#{label} must be #{expected} (got #{value.inspect})"
      end

      # @param uri [String]
      # @return [Boolean] whether `uri` is tcp://HOST:PORT with a valid port.
      def ssl_bind?(uri)
        match = SSL_BIND.match(uri)
        !match.nil? && match[2].to_i <= 65_535
      end

      def tcp_bind?(uri)
        match = TCP_BIND.match(uri)
        !match.nil? && match[2].to_i <= 65_535
      end

      # @param value [Object]
      # @return [Numeric, nil] the number `value` holds, if any.
      def parse_number(value)
        return value if value.is_a?(Numeric) && value.real?
        value.to_f if value.is_a?(String) && value.strip.match?(NUMBER)
      end

      # @param value [Integer, String] the raw value.
      # @param label [String] the setting's name for the error message.
      # @param min [Integer] the smallest allowed number.
      # @param expected [String] what to call the allowed values in the message.
      # @return [Integer] the whole number `value` holds, at least `min`.
      def integer(value, label, min, expected)
        number = value if value.is_a?(Integer)
        number = value.strip.to_i if value.is_a?(String) && value.strip.match?(INTEGER)
        number && number >= min ? number : fail_with(label, expected, value)
      end
    end
  end
end
