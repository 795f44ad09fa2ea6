# frozen_string_literal: true

module Heron
  module Config
    # One setting, declared once in {Settings::ALL}: everything Configuration, the CLI, the DSL
    # and docs/configuration.md need to know about it.
    #
    # - `name`, `default`, `type` (a {Types} method and its extra arguments);
    # - `group`: the docs section it is listed in;
    # - `directive`: how the config file sets it: `:value` (`name VALUE`), `:switch`
    #   (`name` or `name false`), `:list` (`name A, B`), `:custom` (a method written in {DSL}),
    #   or nil (no directive: set from Ruby only);
    # - `usage` and `doc` (one line of at most {Settings::DOC_LIMIT} characters; longer explanations go in
    #   the prose beside the docs' table): its docs row;
    # - `shown`: the default as the docs show it, only where {#default_shown} (made from the
    #   default) would not say it (`"the directory's name"`);
    # - `flags` and `help`: its command-line switches and their help, when it has any;
    # - `also`: further docs rows for directives that write into it (`ssl_bind` for binds);
    # - `owner`: nil for the server's own settings, a gem's name ("heron-profiler") for those a
    #   plugin declares (see {Settings::PLUGINS}).
    Setting = Struct.new(:name, :default, :type, :group, :directive, :usage, :shown, :doc, :flags, :help, :also, :owner,
                         keyword_init: true) do
      # @return [String] the default as the docs show it: the declared `shown`, else made from
      #   the default ({#default_shown}).
      remove_method :shown
      def shown = self[:shown] || default_shown

      # @return [String] the default shown as Ruby (`` `30` ``, `` `"config.ru"` ``), "on"/"off"
      #   for a boolean, "none" for nil or an empty list; a size in BYTES gets its KiB or MiB.
      def default_shown
        case default
        when nil, [] then "none"
        when true, false then default ? "on" : "off"
        when Float then "`#{default == default.to_i ? default.to_i : default}`"
        when Integer then "`#{default}`#{size_note}"
        when STDOUT then "`$stdout`"
        when STDERR then "`$stderr`"
        else "`#{default.inspect}`"
        end
      end

      # @return [String] the config-file directive's name (the setting's, unless the usage says
      #   otherwise, as `continue` for continue_mode).
      def directive_name = usage ? usage[/\A\w+[!?]?/] : name.to_s

      # @return [String] the help line for `heron --help`, with the default.
      def help_line = "#{help} (default #{shown.delete('`')})"

      # @return [String] " (100 MiB)" for a size in BYTES that is a whole number of KiB or MiB, else "".
      def size_note
        return "" unless usage&.end_with?("BYTES") && (default % 1024).zero? && default.positive?
        default % (1024 * 1024) == 0 ? " (#{default / (1024 * 1024)} MiB)" : " (#{default / 1024} KiB)"
      end

      # @param limit [Integer] the longest doc allowed.
      # @return [Array<String>] where this declaration breaks the table's rules: a `shown` that only
      #   repeats {#default_shown}, a doc that is empty, longer than `limit` or not one line.
      def faults(limit)
        [("`shown:` repeats the default" if self[:shown] == default_shown),
         ("doc is not one line" unless doc.match?(/\A[^\n]+\z/)),
         ("doc is #{doc.size} characters, over #{limit}" if doc.size > limit)].compact
      end

      # @return [Array<String>] its rows in the docs' table: directive, flag, default, what.
      def rows
        flag = flags ? flags.map { |switch| "`#{switch}`" }.join(", ") : ""
        [[usage, flag, shown, doc], *Array(also).map { |usage, shown, doc| [usage, "", shown, doc] }]
      end
    end
  end
end
