# frozen_string_literal: true

require_relative "options"
require_relative "target"
require_relative "targets_file"
require_relative "target_picker"
require_relative "launcher"
require_relative "progress"
require_relative "summary"
require_relative "text_report"
require_relative "json_report"
require_relative "html_report"
require_relative "hdr_log"
require_relative "csv_report"
require_relative "compare_report"
require_relative "core_sharing"
require_relative "calibration"

module Heron
  module Attack
    # `heron attack ARGS...`: parses the arguments, runs the attack (or --compare), prints the
    # text report and writes the JSON and HTML files. {#run} returns the exit status.
    class CLI
      # @param argv [Array<String>] the arguments after "attack".
      # @param stdout [IO] the report and --per-request lines.
      # @param stderr [IO] errors and the live progress line (when a TTY).
      def initialize(argv, stdout: $stdout, stderr: $stderr)
        @argv = argv
        @stdout = stdout
        @stderr = stderr
      end

      # @return [Integer] 0 on success, 2 for bad arguments, 3 when a --fail-if threshold is
      #   broken, 4 when no request succeeded, 1 for any other failure.
      def run
        options = Options.parse(@argv)
        return help(options) if options.help
        return compare(options) if options.output.compare
        options.processes.calibrate ? calibrate(options) : attack(options)
      rescue UsageError => e
        fail_with(2, "#{e.message} (see heron attack --help)")
      rescue StandardError => e
        fail_with(1, "#{e.class}: #{e.message}")
      end

      private

      def help(options)
        @stdout.puts(options.parser.help)
        0
      end

      def attack(options)
        targets = load_targets(options)
        sharing = CoreSharing.new(targets.targets, options.processes.count)
        sharing.placements # before the run: the target's processes as they are now
        started_at = Time.now
        progress = Progress.for(@stderr, total: options.load.total_requests)
        launcher = Launcher.new(options, targets, output: @stdout, progress: progress)
        recorder = on_interrupt(-> { launcher.stop }) { launcher.run }
        report = Summary.new(recorder, options, started_at: started_at).to_h
        placed(report, sharing, options.processes.auto)
        report["thresholds"] = options.thresholds.fail_if.map { |threshold| threshold.check(report) }
        write_reports(options, report)
        HdrLog.write(options.output.hdr_log, recorder, started_at) if options.output.hdr_log
        verdict(report)
      end

      # Adds where the generator ran against the target, and how --processes auto chose.
      def placed(report, sharing, count)
        report["placement"] = sharing.placements
        report["plan"]["processes_auto"] = count&.note
        report["warnings"].concat([count&.warning, *sharing.warnings].compact)
      end

      # `--calibrate URL`: the stepped search, a line per step, then the result, saved.
      def calibrate(options)
        targets = load_targets(options)
        CoreSharing.new(targets.targets, 1).warnings.each { |w| @stdout.puts("warning: #{w}") }
        @stdout.puts(format("Calibrating one generator process against %s: %.1fs steps, up to %.0f/s", options.url,
                            options.load.calibrate_step, options.load.calibrate_max_rate))
        result = Calibration.new(targets, max_rate: options.load.calibrate_max_rate, step: options.load.calibrate_step,
                                          client: options.client_settings, output: @stdout).run
        Calibration.save(options.processes.calibration, result)
        calibrated(result, options)
      end

      def calibrated(result, options)
        unless result["rate"].positive?
          return fail_with(1, "one process did not sustain even the lowest step (#{result['steps'].first['rate'].round}/s); saved to #{options.processes.calibration}")
        end
        @stdout.puts(format("Calibration: one process sustains %.0f/s on this machine (lateness p99 %.2f ms < %.0f ms); saved to %s",
                            result["rate"], result["lateness_p99_ms"], Calibration::LATE_MS, options.processes.calibration))
        0
      end

      # Names every broken threshold on stderr; a run where nothing succeeded fails even without
      # thresholds (exit 4, which wins over 3), so a CI job against a dead server cannot pass.
      def verdict(report)
        broken = report["thresholds"].select { |t| t["broken"] }
        broken.each { |t| @stderr.puts("heron attack: threshold broken: #{t['expression']} (actual #{t['actual'] || 'not measured'})") }
        ws = report["websocket"]
        return fail_with(4, "every WebSocket connection failed (#{ws['connections']} tried)") if ws && ws["opened"].zero?
        sent, ok = report["requests"].values_at("sent", "ok")
        return fail_with(4, "no WebSocket message was echoed (#{sent} sent)") if ws && ok.zero?
        return fail_with(4, "every request failed (#{sent} sent, none succeeded)") if sent.positive? && ok.zero?
        broken.empty? ? 0 : 3
      end

      # The first Ctrl-C stops sending and still reports what was measured; a second one exits.
      def on_interrupt(stop)
        previous = trap(:INT) do
          trap(:INT, "DEFAULT")
          stop.call
        end
        yield
      ensure
        trap(:INT, previous || "DEFAULT")
      end

      def load_targets(options)
        request = options.request
        settings = { headers: request.headers, body: request.body, keepalive: options.client.keepalive }
        targets = request.targets_file ? TargetsFile.load(request.targets_file, **settings) : [Target.new(request.method, options.request_url, **settings)]
        TargetPicker.new(targets, mode: request.pick, seed: request.seed)
      end

      def write_reports(options, report)
        @stdout.write(TextReport.new(report).render)
        output = options.output
        JsonReport.write(output.json, report) if output.json
        CsvReport.write(output.csv, report) if output.csv
        File.write(output.html, HtmlReport.new([["run", report]]).render) if output.html
      end

      def compare(options)
        runs = options.output.compare.map { |path| [File.basename(path, ".json"), JsonReport.load(path)] }
        File.write(options.output.html, HtmlReport.new(runs).render) if options.output.html
        @stdout.write(CompareReport.new(runs).render)
        0
      end

      def fail_with(status, message)
        @stderr.puts("heron attack: #{message}")
        status
      end
    end
  end
end
