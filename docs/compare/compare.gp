# tprimat compare: six panels from compare_bars.dat and compare_series_*.dat.
# Restyle freely, then: gnuplot -e 'fmt="png"' compare.gp (or fmt="svg").
if (!exists("fmt")) fmt = "png"
if (fmt eq "svg") {
  set terminal svg size 1800,1000 dynamic font "sans,10"
  set output "compare.svg"
} else {
  set terminal pngcairo size 1800,1000 font "sans,10"
  set output "compare.png"
}
set termoption noenhanced  # names hold underscores, not subscripts
set datafile missing "NaN"
set grid ytics
bar_value(v) = abs(v) >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v)
set multiplot layout 2,3 title "tprimat compare (TFLOP/s: PaLM model FLOPs)\nevery result: nvd, minimal_communication, 1 GPU\nproxies: llama 13 of 32 layers, qwen 12 of 28 layers" font ",11"
set style fill solid 0.8 border -1
set bmargin 3
set xrange [-0.5:1.5]
set xtics norotate font ",9" ("llama" 0, "qwen" 1)
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0  # room for the tallest bar's value
set title "Per-GPU throughput (TFLOP/s/GPU)"
plot "compare_bars.dat" using 1:3:(0.6):5 with boxes lc rgb variable notitle, \
     "" using 1:3:(bar_value($3)) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Peak memory per GPU (GiB)"
plot "compare_bars.dat" using 1:4:(0.6):5 with boxes lc rgb variable notitle, \
     "" using 1:4:(bar_value($4)) with labels offset 0,0.7 font ",9" notitle
unset label
set autoscale x
set xtics autofreq font ",10"
set autoscale y
set key top right opaque font ",8"
set xlabel "measured step"
set offsets 0, 0, graph 0.45, graph 0.05
set title "Training loss"
plot "compare_series_1.dat" using 1:2 with linespoints pt 7 ps 0.5 title "llama", \
     "compare_series_2.dat" using 1:2 with linespoints pt 7 ps 0.5 title "qwen"
set bmargin  # the second row: automatic again
set offsets 0, 0, graph 0.45, 0
set title "Learning rate"
plot "compare_series_1.dat" using 1:3 with linespoints pt 7 ps 0.5 title "llama", \
     "compare_series_2.dat" using 1:3 with linespoints pt 7 ps 0.5 title "qwen"
set offsets 0, 0, graph 0.45, graph 0.05
set title "Memory per GPU (GiB)"
plot "compare_series_1.dat" using 1:4 with linespoints pt 7 ps 0.5 title "llama", \
     "compare_series_2.dat" using 1:4 with linespoints pt 7 ps 0.5 title "qwen"
set offsets 0, 0, graph 0.45, graph 0.05
set title "Step time (s)"
plot "compare_series_1.dat" using 1:5 with linespoints pt 7 ps 0.5 title "llama", \
     "compare_series_2.dat" using 1:5 with linespoints pt 7 ps 0.5 title "qwen"
unset multiplot
